/*
 * nhcore_module.c: the CPython binding of the compiled core, module `envs.nh.core._nhcore`.
 *
 * Thin on purpose: the core (nh_*.h / nh_*.c) knows nothing of Python. Arrays cross the boundary through
 * the buffer protocol only (PyObject_GetBuffer on numpy arrays), so the build needs no numpy headers; the
 * caller allocates every array once and the core writes into it.
 *
 * What is exposed so far (docs/compiled-core.md, status table):
 *   Rng(state)                      numpy's PCG64 in C; `state` is `Generator.bit_generator.state`
 *     .state                        the same dict form, to hand back to numpy
 *     .random() / .integers(lo, hi) one draw, exactly as numpy.random.Generator
 *     .draws(ops, out_int, out_float)  many draws in one call (the differential test's driver)
 *     .hits(kinds, attacks, out)    one attack's rolls per row (nh_hits.h), the hits' differential driver
 *     .reset_draws(params)          FightSim.reset's draws (build, mode, loadouts, spawns, PIDs) -> dict
 *   make_loadout(build, rng=None)   loadouts.make_loadout -> dict (randomised with an Rng)
 *   FightBatch(n)                   n fights in one flat array (nh_fight, nh_state.h), allocated once
 *     .reset(i, rng_state, params)  FightSim.reset of fight i from a numpy generator state
 *     .player(i, p) / .fight(i)     snapshots as dicts, for the differential tests
 *     .set_player(i, p, snapshot)   load a player snapshot (the inverse of .player), .set_rng_state(i, state)
 *     .create_hits(i, attacker, distance)      combat.create_hits with fight i's generator -> dict
 *     .combat_numbers(i, attacker, method)     rolls, damage range, range and speed of one method -> dict
 *     .movement(i, p, op, a, b, c)  one movement.py function on player p of fight i (see FightBatch_movement)
 *     .operation(i, p, op, a, b)    one operations.py function on player p of fight i (see FightBatch_operation)
 *     .step(i, actions=None)        FightSim.step -> TickResult as a dict
 *     .step_batch(actions, has_action, results, masks=None, obs=None)  one tick of every running fight
 *     .write_masks(masks, obs=None) both players' masks (and observations) of every fight (after resets)
 *     .events(i, p) / .stats(i, p) / .tasks(i)   TickEvents, EpisodeStats and the task list, for the tests
 *     .masks(i, p)                  masks.mask_values of player p (§14.3)
 *     .observation(i, p)            the §15.2 observation of player p
 *   movement_candidates(px, py, tx, ty, kind, extent)   movement.movement_candidates over §5.8 offsets
 *   ATTACK_FIELDS                   column names of the `attacks` table
 *   formula_names()                 the §6 formulas ported, with arities
 *   eval_formula(name, args, out)   evaluate one formula over rows of int64 arguments
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <string.h>

#include "nh_combat.h"
#include "nh_formulas.h"
#include "nh_hits.h"
#include "nh_loadout.h"
#include "nh_masks.h"
#include "nh_movement.h"
#include "nh_observation.h"
#include "nh_rewards.h"
#include "nh_operations.h"
#include "nh_sim.h"
#include "nh_state.h"
#include "nh_rng.h"
#include "nh_tables.h"

/* ---- buffers ----------------------------------------------------------------------------------------- */

/* Acquire a C-contiguous buffer of 8-byte items of `kind` ('i' int64 or 'f' float64), with `items` items
 * when items >= 0. Raises TypeError / ValueError naming `what` on a mismatch. */
static int get_buffer(PyObject *obj, Py_buffer *view, char kind, int writable, Py_ssize_t items, const char *what) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s numpy array", what, writable ? " writable" : "");
        return -1;
    }
    const char *fmt = view->format ? view->format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@') {
        fmt++;
    }
    int ok = view->itemsize == 8 &&
             (kind == 'i' ? (strcmp(fmt, "l") == 0 || strcmp(fmt, "q") == 0) : strcmp(fmt, "d") == 0);
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s must have dtype %s (got format '%s')", what,
                     kind == 'i' ? "int64" : "float64", view->format ? view->format : "?");
        PyBuffer_Release(view);
        return -1;
    }
    if (items >= 0 && view->len / 8 != items) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd items (got %zd)", what, items, view->len / 8);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Acquire a C-contiguous int32 buffer of exactly `items` items. */
static int get_buffer32(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t items, const char *what) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s numpy array", what, writable ? " writable" : "");
        return -1;
    }
    const char *fmt = view->format ? view->format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@') {
        fmt++;
    }
    if (view->itemsize != 4 || strcmp(fmt, "i") != 0) {
        PyErr_Format(PyExc_TypeError, "%s must have dtype int32 (got format '%s')", what, view->format ? view->format : "?");
        PyBuffer_Release(view);
        return -1;
    }
    if (view->len / 4 != items) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd items (got %zd)", what, items, view->len / 4);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* ---- 128-bit Python ints ------------------------------------------------------------------------------- */

static int u128_from_py(PyObject *obj, nh_u128 *out, const char *what) {
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int", what);
        return -1;
    }
    PyObject *sixty_four = PyLong_FromLong(64);
    PyObject *high_obj = sixty_four ? PyNumber_Rshift(obj, sixty_four) : NULL;
    Py_XDECREF(sixty_four);
    if (high_obj == NULL) {
        return -1;
    }
    unsigned long long high = PyLong_AsUnsignedLongLong(high_obj); /* also rejects negatives, >= 2**128 */
    Py_DECREF(high_obj);
    if (high == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, "%s must lie in [0, 2**128)", what);
        return -1;
    }
    unsigned long long low = PyLong_AsUnsignedLongLongMask(obj);
    if (low == (unsigned long long)-1 && PyErr_Occurred()) {
        return -1;
    }
    *out = nh_u128_make(high, low);
    return 0;
}

static PyObject *u128_to_py(nh_u128 value) {
    PyObject *high = PyLong_FromUnsignedLongLong((unsigned long long)(value >> 64));
    PyObject *low = PyLong_FromUnsignedLongLong((unsigned long long)value);
    PyObject *sixty_four = PyLong_FromLong(64);
    PyObject *shifted = (high && sixty_four) ? PyNumber_Lshift(high, sixty_four) : NULL;
    PyObject *result = (shifted && low) ? PyNumber_Or(shifted, low) : NULL;
    Py_XDECREF(high);
    Py_XDECREF(low);
    Py_XDECREF(sixty_four);
    Py_XDECREF(shifted);
    return result;
}

/* ---- Rng ------------------------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD nh_rng rng;
} RngObject;

static PyTypeObject RngType; /* defined below, after its methods */

static PyObject *dict_item(PyObject *dict, const char *key) {
    PyObject *item = PyDict_Check(dict) ? PyDict_GetItemString(dict, key) : NULL; /* borrowed */
    if (item == NULL) {
        PyErr_Format(PyExc_ValueError, "a PCG64 state dict (Generator.bit_generator.state) needs the key '%s'", key);
    }
    return item;
}

/* numpy's bit_generator.state dict -> *out; leaves *out untouched on error. */
static int rng_from_state(PyObject *state, nh_rng *out) {
    if (!PyDict_Check(state)) {
        PyErr_SetString(PyExc_TypeError, "state must be a dict: pass numpy's Generator.bit_generator.state");
        return -1;
    }
    PyObject *name = dict_item(state, "bit_generator");
    if (name == NULL) {
        return -1;
    }
    if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "PCG64") != 0) {
        PyErr_SetString(PyExc_ValueError, "state is not a PCG64 state: seed with numpy.random.default_rng");
        return -1;
    }
    PyObject *inner = dict_item(state, "state");
    PyObject *has_uint32 = inner ? dict_item(state, "has_uint32") : NULL;
    PyObject *uinteger = has_uint32 ? dict_item(state, "uinteger") : NULL;
    PyObject *s = uinteger ? dict_item(inner, "state") : NULL;
    PyObject *inc = s ? dict_item(inner, "inc") : NULL;
    if (inc == NULL) {
        return -1;
    }
    nh_rng rng;
    if (u128_from_py(s, &rng.state, "state['state']['state']") || u128_from_py(inc, &rng.inc, "state['state']['inc']")) {
        return -1;
    }
    long has = PyLong_AsLong(has_uint32);
    unsigned long long uint = PyLong_AsUnsignedLongLong(uinteger);
    if (PyErr_Occurred() || (has != 0 && has != 1) || uint > 0xFFFFFFFFull) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "state['has_uint32'] must be 0 or 1 and state['uinteger'] a uint32");
        return -1;
    }
    rng.has_uint32 = (int)has;
    rng.uinteger = (uint32_t)uint;
    *out = rng;
    return 0;
}

static int Rng_init(RngObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"state", NULL};
    PyObject *state;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O", kwlist, &state)) {
        return -1;
    }
    return rng_from_state(state, &self->rng);
}

/* The numpy bit_generator.state dict of *rng. */
static PyObject *rng_state_dict(const nh_rng *rng) {
    PyObject *s = u128_to_py(rng->state);
    PyObject *inc = u128_to_py(rng->inc);
    PyObject *result = NULL;
    if (s && inc) {
        result = Py_BuildValue("{s:s,s:{s:O,s:O},s:i,s:k}", "bit_generator", "PCG64", "state", "state", s, "inc", inc,
                               "has_uint32", rng->has_uint32, "uinteger", (unsigned long)rng->uinteger);
    }
    Py_XDECREF(s);
    Py_XDECREF(inc);
    return result;
}

static PyObject *Rng_get_state(RngObject *self, void *closure) {
    (void)closure;
    return rng_state_dict(&self->rng);
}

static int Rng_set_state_attr(RngObject *self, PyObject *value, void *closure) {
    (void)closure;
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "state cannot be deleted");
        return -1;
    }
    return rng_from_state(value, &self->rng);
}

static PyObject *Rng_random(RngObject *self, PyObject *unused) {
    (void)unused;
    return PyFloat_FromDouble(nh_rng_random(&self->rng));
}

/* integers(low, high): high exclusive, like numpy; high may be 2**63 (the full int64 range). */
static PyObject *Rng_integers(RngObject *self, PyObject *args) {
    PyObject *low_obj, *high_obj;
    if (!PyArg_ParseTuple(args, "OO", &low_obj, &high_obj)) {
        return NULL;
    }
    PyObject *one = PyLong_FromLong(1);
    PyObject *high_incl_obj = one ? PyNumber_Subtract(high_obj, one) : NULL;
    Py_XDECREF(one);
    if (high_incl_obj == NULL) {
        return NULL;
    }
    long long low = PyLong_AsLongLong(low_obj);
    long long high_incl = PyErr_Occurred() ? 0 : PyLong_AsLongLong(high_incl_obj);
    Py_DECREF(high_incl_obj);
    if (PyErr_Occurred()) {
        return NULL; /* OverflowError: outside int64, as numpy's ValueError for int64 bounds */
    }
    if (low > high_incl) {
        PyErr_SetString(PyExc_ValueError, "low >= high");
        return NULL;
    }
    return PyLong_FromLongLong(nh_rng_uniform(&self->rng, low, high_incl));
}

/* Draw kinds of `draws`' op table. */
enum { NH_DRAW_RANDOM = 0, NH_DRAW_UNIFORM = 1 };

/* draws(ops, out_int, out_float): ops is int64 (n, 3) rows (kind, low, high_inclusive); kind 0 is random()
 * into out_float[i], kind 1 is integers(low, high_inclusive + 1) into out_int[i]. */
static PyObject *Rng_draws(RngObject *self, PyObject *args) {
    PyObject *ops_obj, *int_obj, *float_obj;
    if (!PyArg_ParseTuple(args, "OOO", &ops_obj, &int_obj, &float_obj)) {
        return NULL;
    }
    Py_buffer ops, out_i, out_f;
    if (get_buffer(ops_obj, &ops, 'i', 0, -1, "ops")) {
        return NULL;
    }
    Py_ssize_t n = ops.len / 8 / 3;
    if (ops.len / 8 != n * 3) {
        PyBuffer_Release(&ops);
        return PyErr_Format(PyExc_ValueError, "ops must have shape (n, 3)");
    }
    if (get_buffer(int_obj, &out_i, 'i', 1, n, "out_int")) {
        PyBuffer_Release(&ops);
        return NULL;
    }
    if (get_buffer(float_obj, &out_f, 'f', 1, n, "out_float")) {
        PyBuffer_Release(&ops);
        PyBuffer_Release(&out_i);
        return NULL;
    }
    const int64_t *op = (const int64_t *)ops.buf;
    int64_t *oi = (int64_t *)out_i.buf;
    double *of = (double *)out_f.buf;
    Py_ssize_t bad = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const int64_t *row = op + 3 * i;
        if (row[0] == NH_DRAW_RANDOM) {
            of[i] = nh_rng_random(&self->rng);
        } else if (row[0] == NH_DRAW_UNIFORM && row[1] <= row[2]) {
            oi[i] = nh_rng_uniform(&self->rng, row[1], row[2]);
        } else {
            bad = i;
            break;
        }
    }
    PyBuffer_Release(&ops);
    PyBuffer_Release(&out_i);
    PyBuffer_Release(&out_f);
    if (bad >= 0) {
        return PyErr_Format(PyExc_ValueError, "ops row %zd: kind must be 0 or 1 and low <= high_inclusive", bad);
    }
    Py_RETURN_NONE;
}

/* ---- attack rolls ---- */

/* Columns of the float64 `attacks` table of Rng.hits: nh_attack's fields, flattened. Every int field is
 * far below 2**53, so float64 carries it exactly; the chances are float64 already. */
enum {
    AF_CHANCE, AF_RETRY_CHANCE, AF_LOW, AF_HIGH, AF_PROTECTED, AF_CLAMP, AF_HAS_DHAROK, AF_DHAROK_BASE_HP,
    AF_DHAROK_HP, AF_BOLT_KIND, AF_BOLT_CHANCE, AF_BOLT_GUARANTEED, AF_BOLT_BONUS, AF_BOLT_FRESH_MAX, AF_COUNT
};
static const char *const ATTACK_FIELD_NAMES[AF_COUNT] = {
    "chance", "retry_chance", "low", "high", "protected", "clamp", "has_dharok", "dharok_base_hp",
    "dharok_hp", "bolt_kind", "bolt_chance", "bolt_guaranteed", "bolt_bonus", "bolt_fresh_max",
};
enum { NH_HIT_ORDINARY = 0, NH_HIT_CLAWS = 1, NH_HIT_VESTA = 2 }; /* kinds of Rng.hits */
#define HIT_OUT_COLUMNS 5 /* four hitsplats (one for ordinary and Vesta hits, the rest 0), then accurate */

static nh_attack attack_from_row(const double *row) {
    nh_attack atk = {
        .chance = row[AF_CHANCE],
        .retry_chance = row[AF_RETRY_CHANCE],
        .low = (int64_t)row[AF_LOW],
        .high = (int64_t)row[AF_HIGH],
        .protected_ = row[AF_PROTECTED] != 0.0,
        .clamp = row[AF_CLAMP] != 0.0,
        .has_dharok = row[AF_HAS_DHAROK] != 0.0,
        .dharok_base_hp = (int64_t)row[AF_DHAROK_BASE_HP],
        .dharok_hp = (int64_t)row[AF_DHAROK_HP],
        .bolt = {
            .kind = (int32_t)row[AF_BOLT_KIND],
            .chance = row[AF_BOLT_CHANCE],
            .guaranteed = row[AF_BOLT_GUARANTEED] != 0.0,
            .bonus = (int64_t)row[AF_BOLT_BONUS],
            .fresh_max = (int64_t)row[AF_BOLT_FRESH_MAX],
        },
    };
    return atk;
}

/* hits(kinds, attacks, out): kinds int64 (n,), attacks float64 (n, len(ATTACK_FIELDS)), out int64 (n, 5). */
static PyObject *Rng_hits(RngObject *self, PyObject *args) {
    PyObject *kinds_obj, *attacks_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "OOO", &kinds_obj, &attacks_obj, &out_obj)) {
        return NULL;
    }
    Py_buffer kinds, attacks, out;
    if (get_buffer(kinds_obj, &kinds, 'i', 0, -1, "kinds")) {
        return NULL;
    }
    Py_ssize_t n = kinds.len / 8;
    if (get_buffer(attacks_obj, &attacks, 'f', 0, n * AF_COUNT, "attacks")) {
        PyBuffer_Release(&kinds);
        return NULL;
    }
    if (get_buffer(out_obj, &out, 'i', 1, n * HIT_OUT_COLUMNS, "out")) {
        PyBuffer_Release(&kinds);
        PyBuffer_Release(&attacks);
        return NULL;
    }
    const int64_t *kind = (const int64_t *)kinds.buf;
    Py_ssize_t bad = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        nh_attack atk = attack_from_row((const double *)attacks.buf + i * AF_COUNT);
        int64_t *o = (int64_t *)out.buf + i * HIT_OUT_COLUMNS;
        int accurate = 0;
        if (atk.low > atk.high || (atk.bolt.kind < NH_BOLT_NONE || atk.bolt.kind > NH_BOLT_DRAGONSTONE)) {
            bad = i;
            break;
        }
        o[1] = o[2] = o[3] = 0;
        if (kind[i] == NH_HIT_ORDINARY) {
            o[0] = nh_ordinary_hit(&self->rng, &atk, &accurate);
        } else if (kind[i] == NH_HIT_CLAWS) {
            nh_claws_hitsplats(&self->rng, &atk, o, &accurate);
        } else if (kind[i] == NH_HIT_VESTA) {
            o[0] = nh_vesta_hit(&self->rng, &atk, &accurate);
        } else {
            bad = i;
            break;
        }
        o[4] = accurate;
    }
    PyBuffer_Release(&kinds);
    PyBuffer_Release(&attacks);
    PyBuffer_Release(&out);
    if (bad >= 0) {
        return PyErr_Format(PyExc_ValueError, "row %zd: kind must be 0, 1 or 2, low <= high, bolt_kind -1..2", bad);
    }
    Py_RETURN_NONE;
}

/* ---- loadouts and reset ---- */

static PyObject *int_list(const int32_t *values, int32_t n) {
    PyObject *list = PyList_New(n);
    for (int32_t i = 0; list && i < n; i++) {
        PyObject *v = PyLong_FromLong(values[i]);
        if (v == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

static PyObject *id_or_none(int32_t id) {
    if (id == NH_EMPTY) {
        Py_RETURN_NONE;
    }
    return PyLong_FromLong(id);
}

static PyObject *loadout_to_dict(const nh_loadout *lo) {
    PyObject *sets = PyList_New(NH_NUM_GEAR_SETS);
    for (int gs = 0; sets && gs < NH_NUM_GEAR_SETS; gs++) {
        PyObject *one = int_list(lo->sets[gs], lo->set_len[gs]);
        if (one == NULL) {
            Py_CLEAR(sets);
            break;
        }
        PyList_SET_ITEM(sets, gs, one);
    }
    if (sets == NULL) {
        return NULL;
    }
    return Py_BuildValue("{s:i,s:i,s:i,s:i,s:N,s:N,s:N,s:N,s:i,s:N,s:O,s:O}", "build", lo->build, "spellbook",
                         lo->spellbook, "fight_mode", lo->fight_mode, "primary_food", lo->primary_food, "sets", sets,
                         "equipment", int_list(lo->equipment, NH_NUM_SLOTS), "inventory",
                         int_list(lo->inventory, NH_INVENTORY_SIZE), "melee_special_weapon",
                         id_or_none(lo->melee_special_weapon), "ranged_weapon", lo->ranged_weapon, "magic_weapon",
                         id_or_none(lo->magic_weapon), "ranged_special", lo->ranged_special ? Py_True : Py_False,
                         "has_nightmare_staff", lo->has_nightmare_staff ? Py_True : Py_False);
}

static PyObject *loadout_error(int err) {
    switch (err) {
    case NH_ERR_INVENTORY_OVERFULL:
        return PyErr_Format(PyExc_ValueError, "loadout: gear and supplies exceed %d inventory slots (spec 12.4)",
                            (int)NH_INVENTORY_SIZE);
    case NH_ERR_SUPPLIES_OVERFULL:
        return PyErr_Format(PyExc_RuntimeError, "loadout: more supply entries than NH_MAX_SUPPLIES (gen_tables bug)");
    case NH_ERR_NO_RANGED_WEAPON:
        return PyErr_Format(PyExc_ValueError, "loadout: the ranged set has no weapon (spec 12.5)");
    default:
        return PyErr_Format(PyExc_ValueError, "bad reset parameters (unknown build or fight mode, or no options)");
    }
}

/* make_loadout(build, rng=None): build is the Build's index (list(Build)). */
static PyObject *make_loadout(PyObject *self, PyObject *args) {
    (void)self;
    int build;
    PyObject *rng_obj = Py_None;
    if (!PyArg_ParseTuple(args, "i|O", &build, &rng_obj)) {
        return NULL;
    }
    if (rng_obj != Py_None && !PyObject_TypeCheck(rng_obj, &RngType)) {
        return PyErr_Format(PyExc_TypeError, "rng must be an envs.nh.core._nhcore.Rng or None");
    }
    nh_loadout lo;
    int err = nh_make_loadout(build, rng_obj == Py_None ? NULL : &((RngObject *)rng_obj)->rng, &lo);
    return err ? loadout_error(err) : loadout_to_dict(&lo);
}

static int param_int(PyObject *dict, const char *key, int32_t *out) {
    PyObject *v = dict_item(dict, key);
    if (v == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "reset params need the key '%s'", key);
        return -1;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}

/* The nh_reset_params of a params dict (see Rng.reset_draws). */
static int reset_params_from_dict(PyObject *dict, nh_reset_params *prm) {
    memset(prm, 0, sizeof(*prm));
    if (param_int(dict, "build", &prm->build) || param_int(dict, "randomize_build", &prm->randomize_build) ||
        param_int(dict, "randomize_fight_type", &prm->randomize_fight_type) ||
        param_int(dict, "fight_type", &prm->fight_type) || param_int(dict, "randomize_gear", &prm->randomize_gear) ||
        param_int(dict, "self_play", &prm->self_play) ||
        param_int(dict, "first_player_baseline", &prm->first_player_baseline) ||
        param_int(dict, "training", &prm->training) || param_int(dict, "death_match", &prm->death_match) ||
        param_int(dict, "max_episode_ticks", &prm->max_episode_ticks) ||
        param_int(dict, "only_switch_prayer_when_about_to_attack", &prm->only_switch_prayer_when_about_to_attack) ||
        param_int(dict, "only_switch_gear_when_attack_soon", &prm->only_switch_gear_when_attack_soon) ||
        param_int(dict, "allow_smite", &prm->allow_smite) || param_int(dict, "allow_redemption", &prm->allow_redemption) ||
        param_int(dict, "allow_moving_if_can_attack", &prm->allow_moving_if_can_attack)) {
        return -1;
    }
    PyObject *options = PyDict_GetItemString(dict, "build_options");
    PyObject *weights = PyDict_GetItemString(dict, "build_weights");
    if (options == NULL || !PyList_Check(options) || PyList_GET_SIZE(options) > NH_MAX_BUILD_OPTIONS) {
        PyErr_Format(PyExc_ValueError, "reset params need 'build_options', a list of at most %d builds",
                     NH_MAX_BUILD_OPTIONS);
        return -1;
    }
    prm->n_build_options = (int32_t)PyList_GET_SIZE(options);
    for (int32_t i = 0; i < prm->n_build_options; i++) {
        prm->build_options[i] = (int32_t)PyLong_AsLong(PyList_GET_ITEM(options, i));
    }
    if (weights != NULL && weights != Py_None) {
        if (!PyList_Check(weights) || PyList_GET_SIZE(weights) != prm->n_build_options) {
            PyErr_Format(PyExc_ValueError, "build_weights needs one weight per build option");
            return -1;
        }
        prm->weighted = 1;
        for (int32_t i = 0; i < prm->n_build_options; i++) {
            prm->build_weights[i] = PyFloat_AsDouble(PyList_GET_ITEM(weights, i));
        }
    }
    if (PyErr_Occurred()) {
        return -1;
    }
    return 0;
}

/* reset_draws(params): params is a dict of nh_reset_params' fields (build_options a list of Build indices,
 * build_weights a list of floats or None, fight_type -1 for the build's own). */
static PyObject *Rng_reset_draws(RngObject *self, PyObject *args) {
    PyObject *dict;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &dict)) {
        return NULL;
    }
    nh_reset_params prm;
    if (reset_params_from_dict(dict, &prm)) {
        return NULL;
    }
    nh_reset_result res;
    int err = nh_reset_draws(&self->rng, &prm, &res);
    if (err) {
        return loadout_error(err);
    }
    return Py_BuildValue("{s:i,s:i,s:[N,N],s:[i,i],s:[i,i],s:[d,d],s:[i,i]}", "build", res.build, "fight_mode",
                         res.fight_mode, "loadouts", loadout_to_dict(&res.loadouts[0]),
                         loadout_to_dict(&res.loadouts[1]), "x", res.x[0], res.x[1], "y", res.y[0], res.y[1], "pid",
                         res.pid[0], res.pid[1], "pid_countdown", res.pid_countdown[0], res.pid_countdown[1]);
}

static PyMethodDef Rng_methods[] = {
    {"reset_draws", (PyCFunction)Rng_reset_draws, METH_VARARGS,
     "reset_draws(params): FightSim.reset's draws (build, fight mode, loadouts, spawns, PIDs) as a dict."},
    {"hits", (PyCFunction)Rng_hits, METH_VARARGS,
     "hits(kinds, attacks, out): one attack's rolls per row; kinds 0 ordinary, 1 claws, 2 Vesta."},
    {"random", (PyCFunction)Rng_random, METH_NOARGS, "Generator.random(): a float in [0, 1)."},
    {"integers", (PyCFunction)Rng_integers, METH_VARARGS, "Generator.integers(low, high), int64, high exclusive."},
    {"draws", (PyCFunction)Rng_draws, METH_VARARGS,
     "draws(ops, out_int, out_float): rows (kind, low, high_inclusive); kind 0 random, 1 integers."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Rng_getset[] = {
    {"state", (getter)Rng_get_state, (setter)Rng_set_state_attr, "numpy's bit_generator.state dict.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RngType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "envs.nh.core._nhcore.Rng",
    .tp_doc = PyDoc_STR("numpy's PCG64 Generator draws in C, bit for bit; Rng(Generator.bit_generator.state)."),
    .tp_basicsize = sizeof(RngObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Rng_init,
    .tp_methods = Rng_methods,
    .tp_getset = Rng_getset,
};

/* ---- FightBatch ---- */

typedef struct {
    PyObject_HEAD Py_ssize_t n;
    nh_fight *fights;
    nh_reward_weights *weights; /* NULL until set_reward_weights: then every step computes rewards (§17) */
    nh_reward_state *rewards;   /* one per fight */
} FightBatchObject;

static int FightBatch_init(FightBatchObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"n_fights", NULL};
    Py_ssize_t n;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n", kwlist, &n)) {
        return -1;
    }
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "n_fights must be at least 1");
        return -1;
    }
    PyMem_Free(self->fights);
    PyMem_Free(self->rewards);
    self->fights = PyMem_Calloc((size_t)n, sizeof(nh_fight));
    self->rewards = PyMem_Calloc((size_t)n, sizeof(nh_reward_state));
    if (self->fights == NULL || self->rewards == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->n = n;
    return 0;
}

static void FightBatch_dealloc(FightBatchObject *self) {
    PyMem_Free(self->fights);
    PyMem_Free(self->rewards);
    PyMem_Free(self->weights);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static nh_fight *fight_at(FightBatchObject *self, Py_ssize_t i) {
    if (self->fights == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "FightBatch is not initialised");
        return NULL;
    }
    if (i < 0 || i >= self->n) {
        PyErr_Format(PyExc_IndexError, "fight %zd out of range 0..%zd", i, self->n - 1);
        return NULL;
    }
    return &self->fights[i];
}

/* fight_at(self, i), also checking a player index (0 or 1) for the per-player accessors. */
static nh_fight *fight_player_at(FightBatchObject *self, Py_ssize_t i, int which) {
    if (which != 0 && which != 1) {
        PyErr_Format(PyExc_IndexError, "player must be 0 or 1, got %d", which);
        return NULL;
    }
    return fight_at(self, i);
}

/* The fight (and, with `which`, the player) a method's arguments name: (i) or (i, p), checked. */
static nh_fight *fight_args(FightBatchObject *self, PyObject *args, Py_ssize_t *i, int *which) {
    if (which != NULL ? !PyArg_ParseTuple(args, "ni", i, which) : !PyArg_ParseTuple(args, "n", i)) {
        return NULL;
    }
    return which != NULL ? fight_player_at(self, *i, *which) : fight_at(self, *i);
}

/* reset(i, rng_state, params): numpy's bit_generator.state and the reset_draws params dict. */
static PyObject *FightBatch_reset(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    PyObject *state, *params;
    if (!PyArg_ParseTuple(args, "nOO!", &i, &state, &PyDict_Type, &params)) {
        return NULL;
    }
    nh_fight *fight = fight_at(self, i);
    if (fight == NULL) {
        return NULL;
    }
    nh_rng rng; /* parsed apart first, so that bad input leaves the fight untouched */
    nh_reset_params prm;
    if (rng_from_state(state, &rng) || reset_params_from_dict(params, &prm)) {
        return NULL;
    }
    fight->rng = rng;
    fight->params = prm;
    memset(&self->rewards[i], 0, sizeof(nh_reward_state)); /* NHEngine.reset: no previous signals */
    int err = nh_fight_reset(fight);
    if (err) {
        return loadout_error(err);
    }
    Py_RETURN_NONE;
}

static PyObject *FightBatch_rng_state(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    nh_fight *fight = fight_args(self, args, &i, NULL);
    if (fight == NULL) {
        return NULL;
    }
    return rng_state_dict(&fight->rng);
}

static PyObject *fight_style_tuple(int32_t weapon_class, int32_t style) {
    const nh_fight_style *fs = &NH_WEAPON_CLASS_TABLE[weapon_class].styles[style];
    return Py_BuildValue("(iiii)", weapon_class, style, fs->stance, fs->style_type);
}

static PyObject *hit_queue_list(const nh_player *p) {
    PyObject *list = PyList_New(p->n_hit_queue);
    for (int32_t k = 0; list && k < p->n_hit_queue; k++) {
        const nh_pending_hit *h = &p->hit_queue[k];
        PyObject *item = Py_BuildValue("{s:i,s:N,s:O,s:i,s:i,s:i}", "attacker", h->attacker, "damages",
                                       int_list(h->damages, h->n_damages), "accurate",
                                       h->accurate ? Py_True : Py_False, "delay", h->delay, "style", h->style,
                                       "effect", h->effect);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, item);
    }
    return list;
}

static PyObject *walk_queue_list(const nh_player *p) {
    PyObject *list = PyList_New(p->n_walk_queue);
    for (int32_t k = 0; list && k < p->n_walk_queue; k++) {
        const int32_t *tile = p->walk_queue[(p->walk_head + k) % NH_MAX_WALK_QUEUE];
        PyObject *item = Py_BuildValue("(ii)", tile[0], tile[1]);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, item);
    }
    return list;
}

static PyObject *prayer_list(uint32_t mask) {
    int32_t ids[NH_NUM_PRAYERS], n = 0;
    for (int32_t k = 0; k < NH_NUM_PRAYERS; k++) {
        if (mask >> k & 1u) {
            ids[n++] = k;
        }
    }
    return int_list(ids, n);
}

/* A player reference (NH_NO_PLAYER), a style or any index that is negative for None, as Python sees it. */
static PyObject *int_or_none(int32_t value) {
    if (value < 0) {
        Py_RETURN_NONE;
    }
    return PyLong_FromLong(value);
}

/* player(i, p): every field of PlayerState, enums as ints, player references as indices. */
static PyObject *FightBatch_player(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = fight_args(self, args, &i, &which);
    if (fight == NULL) {
        return NULL;
    }
    const nh_player *p = &fight->players[which];
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return NULL;
    }
#define PUT(key, value)                                                                                                \
    do {                                                                                                               \
        PyObject *v_ = (value);                                                                                        \
        if (v_ == NULL || PyDict_SetItemString(d, key, v_) != 0) {                                                     \
            Py_XDECREF(v_);                                                                                            \
            Py_DECREF(d);                                                                                              \
            return NULL;                                                                                               \
        }                                                                                                              \
        Py_DECREF(v_);                                                                                                 \
    } while (0)
#define PUT_INT(field) PUT(#field, PyLong_FromLong(p->field))
#define PUT_BOOL(field) PUT(#field, PyBool_FromLong(p->field))
    PUT_INT(index);
    PUT("loadout", loadout_to_dict(&p->loadout));
    PUT("base", int_list(p->base, NH_NUM_SKILLS));
    PUT("level", int_list(p->level, NH_NUM_SKILLS));
    PUT("equipment", int_list(p->equipment, NH_NUM_SLOTS));
    PUT("inventory", int_list(p->inventory, NH_INVENTORY_SIZE));
    PUT_INT(spellbook);
    PUT_INT(fight_mode);
    PUT_BOOL(is_baseline);
    PUT("bonuses", int_list(p->bonuses, NH_NUM_BONUSES));
    PUT("style", fight_style_tuple(p->weapon_class, p->style));
    PUT("timer_ticks", int_list(p->timer_ticks, NH_NUM_TIMER_IDS));
    PUT("timer_uncapped", int_list(p->timer_uncapped, NH_NUM_TIMER_IDS));
    PUT("prayers", prayer_list(p->prayers));
    PUT("prayer_drain_acc", PyFloat_FromDouble(p->prayer_drain_acc));
    PUT_BOOL(prayer_drain_running);
    PUT_INT(special_energy);
    PUT_BOOL(special_armed);
    PUT_INT(gmaul_queued);
    PUT_BOOL(special_regen_running);
    PUT_BOOL(vengeance);
    PUT("target", int_or_none(p->target));
    PUT("last_attacker", int_or_none(p->last_attacker));
    PUT_INT(last_hit_received_tick);
    PUT("selected_spell", p->selected_spell == NH_NO_SPELL ? Py_NewRef(Py_None) : PyLong_FromLong(p->selected_spell));
    PUT("previous_spell", p->previous_spell == NH_NO_SPELL ? Py_NewRef(Py_None) : PyLong_FromLong(p->previous_spell));
    PUT_BOOL(auto_retaliate);
    PUT("hit_queue", hit_queue_list(p));
    PUT("damage_queue", int_list(p->damage_queue, p->n_damage_queue));
    PUT("hitsplats", int_list(p->hitsplats, p->n_hitsplats));
    PUT_INT(x);
    PUT_INT(y);
    PUT("walk_queue", walk_queue_list(p));
    PUT_BOOL(moving);
    PUT_BOOL(running);
    PUT_INT(run_energy);
    PUT_INT(last_run_recovery_tick);
    PUT("spawn", Py_BuildValue("(ii)", p->spawn[0], p->spawn[1]));
    PUT("pid", PyFloat_FromDouble(p->pid));
    PUT_INT(pid_countdown);
    PUT_INT(poison_damage);
    PUT_BOOL(dying);
    PUT("remembered_target", int_or_none(p->remembered_target));
#undef PUT_BOOL
#undef PUT_INT
#undef PUT
    return d;
}

/* ---- loading a player snapshot (the inverse of FightBatch.player) ---- */

static PyObject *snap_item(PyObject *snap, const char *key) {
    PyObject *v = PyDict_GetItemString(snap, key); /* borrowed */
    if (v == NULL) {
        PyErr_Format(PyExc_ValueError, "player snapshot needs the key '%s'", key);
    }
    return v;
}

static int snap_int(PyObject *snap, const char *key, int32_t *out) {
    PyObject *v = snap_item(snap, key);
    if (v == NULL) {
        return -1;
    }
    long x = PyLong_AsLong(v); /* bools are ints */
    if (x == -1 && PyErr_Occurred()) {
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}

/* An int or None (-> none_value). */
static int snap_opt(PyObject *snap, const char *key, int32_t none_value, int32_t *out) {
    PyObject *v = snap_item(snap, key);
    if (v == NULL) {
        return -1;
    }
    if (v == Py_None) {
        *out = none_value;
        return 0;
    }
    return snap_int(snap, key, out);
}

/* A sequence of ints into out[]: exactly `n` items when n >= 0, else at most `cap` (count into *count). */
static int seq_ints(PyObject *v, const char *key, int32_t *out, Py_ssize_t n, Py_ssize_t cap, int32_t *count) {
    PyObject *seq = PySequence_Fast(v, "not a sequence");
    if (seq == NULL) {
        PyErr_Format(PyExc_TypeError, "player snapshot '%s' must be a sequence of ints", key);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if ((n >= 0 && len != n) || (n < 0 && len > cap)) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "player snapshot '%s' has %zd items (%s %zd)", key, len,
                     n >= 0 ? "expected" : "at most", n >= 0 ? n : cap);
        return -1;
    }
    for (Py_ssize_t k = 0; k < len; k++) {
        long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, k));
        if (x == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        out[k] = (int32_t)x;
    }
    if (count != NULL) {
        *count = (int32_t)len;
    }
    Py_DECREF(seq);
    return 0;
}

static int snap_ints(PyObject *snap, const char *key, int32_t *out, Py_ssize_t n, Py_ssize_t cap, int32_t *count) {
    PyObject *v = snap_item(snap, key);
    return v == NULL ? -1 : seq_ints(v, key, out, n, cap, count);
}

static int snap_double(PyObject *snap, const char *key, double *out) {
    PyObject *v = snap_item(snap, key);
    if (v == NULL) {
        return -1;
    }
    *out = PyFloat_AsDouble(v);
    return PyErr_Occurred() ? -1 : 0;
}

static int player_from_snapshot(PyObject *snap, nh_player *p) {
    int32_t style[4], n, prayers[NH_NUM_PRAYERS], pair[2];
    if (!PyDict_Check(snap)) {
        PyErr_SetString(PyExc_TypeError, "a player snapshot is a dict (FightBatch.player's form)");
        return -1;
    }
    if (snap_int(snap, "index", &p->index) || snap_ints(snap, "base", p->base, NH_NUM_SKILLS, 0, NULL) ||
        snap_ints(snap, "level", p->level, NH_NUM_SKILLS, 0, NULL) ||
        snap_ints(snap, "equipment", p->equipment, NH_NUM_SLOTS, 0, NULL) ||
        snap_ints(snap, "inventory", p->inventory, NH_INVENTORY_SIZE, 0, NULL) ||
        snap_int(snap, "spellbook", &p->spellbook) || snap_int(snap, "fight_mode", &p->fight_mode) ||
        snap_int(snap, "is_baseline", &p->is_baseline) ||
        snap_ints(snap, "bonuses", p->bonuses, NH_NUM_BONUSES, 0, NULL) ||
        snap_ints(snap, "style", style, 4, 0, NULL) ||
        snap_ints(snap, "timer_ticks", p->timer_ticks, NH_NUM_TIMER_IDS, 0, NULL) ||
        snap_ints(snap, "timer_uncapped", p->timer_uncapped, NH_NUM_TIMER_IDS, 0, NULL) ||
        snap_ints(snap, "prayers", prayers, -1, NH_NUM_PRAYERS, &n) ||
        snap_double(snap, "prayer_drain_acc", &p->prayer_drain_acc) ||
        snap_int(snap, "prayer_drain_running", &p->prayer_drain_running) ||
        snap_int(snap, "special_energy", &p->special_energy) || snap_int(snap, "special_armed", &p->special_armed) ||
        snap_int(snap, "gmaul_queued", &p->gmaul_queued) ||
        snap_int(snap, "special_regen_running", &p->special_regen_running) ||
        snap_int(snap, "vengeance", &p->vengeance) || snap_opt(snap, "target", NH_NO_PLAYER, &p->target) ||
        snap_opt(snap, "last_attacker", NH_NO_PLAYER, &p->last_attacker) ||
        snap_int(snap, "last_hit_received_tick", &p->last_hit_received_tick) ||
        snap_opt(snap, "selected_spell", NH_NO_SPELL, &p->selected_spell) ||
        snap_opt(snap, "previous_spell", NH_NO_SPELL, &p->previous_spell) ||
        snap_int(snap, "auto_retaliate", &p->auto_retaliate) ||
        snap_ints(snap, "damage_queue", p->damage_queue, -1, NH_MAX_DAMAGE_QUEUE, &p->n_damage_queue) ||
        snap_ints(snap, "hitsplats", p->hitsplats, -1, NH_MAX_HITSPLATS, &p->n_hitsplats) ||
        snap_int(snap, "x", &p->x) || snap_int(snap, "y", &p->y) || snap_int(snap, "moving", &p->moving) ||
        snap_int(snap, "running", &p->running) || snap_int(snap, "run_energy", &p->run_energy) ||
        snap_int(snap, "last_run_recovery_tick", &p->last_run_recovery_tick) ||
        snap_ints(snap, "spawn", p->spawn, 2, 0, NULL) || snap_double(snap, "pid", &p->pid) ||
        snap_int(snap, "pid_countdown", &p->pid_countdown) || snap_int(snap, "poison_damage", &p->poison_damage) ||
        snap_int(snap, "dying", &p->dying) ||
        snap_opt(snap, "remembered_target", NH_NO_PLAYER, &p->remembered_target)) {
        return -1;
    }
    if (style[0] < 0 || style[0] >= NH_NUM_WEAPON_CLASSES || style[1] < 0 ||
        style[1] >= NH_WEAPON_CLASS_TABLE[style[0]].n_styles) {
        PyErr_SetString(PyExc_ValueError, "player snapshot 'style' names no style of its weapon class");
        return -1;
    }
    p->weapon_class = style[0];
    p->style = style[1];
    p->prayers = 0;
    for (int32_t k = 0; k < n; k++) {
        if (prayers[k] < 0 || prayers[k] >= NH_NUM_PRAYERS) {
            PyErr_Format(PyExc_ValueError, "player snapshot: no prayer %d", prayers[k]);
            return -1;
        }
        p->prayers |= 1u << prayers[k];
    }
    PyObject *hits = snap_item(snap, "hit_queue"), *walk = hits ? snap_item(snap, "walk_queue") : NULL;
    if (walk == NULL || !PyList_Check(hits) || !PyList_Check(walk) || PyList_GET_SIZE(hits) > NH_MAX_HIT_QUEUE ||
        PyList_GET_SIZE(walk) > NH_MAX_WALK_QUEUE) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "player snapshot: hit_queue and walk_queue must be short lists");
        }
        return -1;
    }
    p->n_hit_queue = (int32_t)PyList_GET_SIZE(hits);
    for (int32_t k = 0; k < p->n_hit_queue; k++) {
        PyObject *h = PyList_GET_ITEM(hits, k);
        nh_pending_hit *hit = &p->hit_queue[k];
        if (!PyDict_Check(h) || snap_int(h, "attacker", &hit->attacker) ||
            snap_ints(h, "damages", hit->damages, -1, NH_MAX_HIT_DAMAGES, &hit->n_damages) ||
            snap_int(h, "accurate", &hit->accurate) || snap_int(h, "delay", &hit->delay) ||
            snap_int(h, "style", &hit->style) || snap_int(h, "effect", &hit->effect)) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_TypeError, "player snapshot: a hit_queue entry is a dict");
            }
            return -1;
        }
    }
    p->walk_head = 0;
    p->n_walk_queue = (int32_t)PyList_GET_SIZE(walk);
    for (int32_t k = 0; k < p->n_walk_queue; k++) {
        if (seq_ints(PyList_GET_ITEM(walk, k), "walk_queue", pair, 2, 0, NULL)) {
            return -1;
        }
        p->walk_queue[k][0] = pair[0];
        p->walk_queue[k][1] = pair[1];
    }
    return 0;
}

/* set_player(i, p, snapshot): everything but the loadout (kept from the reset). */
static PyObject *FightBatch_set_player(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    PyObject *snap;
    if (!PyArg_ParseTuple(args, "niO", &i, &which, &snap)) {
        return NULL;
    }
    nh_fight *fight = fight_player_at(self, i, which);
    if (fight == NULL) {
        return NULL;
    }
    nh_player loaded = fight->players[which]; /* parsed apart: bad input leaves the player as it was */
    if (player_from_snapshot(snap, &loaded)) {
        return NULL;
    }
    fight->players[which] = loaded;
    Py_RETURN_NONE;
}

static PyObject *FightBatch_set_rng_state(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    PyObject *state;
    if (!PyArg_ParseTuple(args, "nO", &i, &state)) {
        return NULL;
    }
    nh_fight *fight = fight_at(self, i);
    if (fight == NULL || rng_from_state(state, &fight->rng)) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *combat_error(int err) {
    if (err == NH_ERR_NO_SPELL) {
        return PyErr_Format(PyExc_ValueError, "MAGIC_SPELL needs a selected spell");
    }
    return PyErr_Format(PyExc_RuntimeError, "an attack made more than %d hits", NH_MAX_ATTACK_HITS);
}

/* create_hits(i, attacker, distance): combat.create_hits(fight rng, players[attacker], the other, distance). */
static PyObject *FightBatch_create_hits(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int attacker, distance;
    if (!PyArg_ParseTuple(args, "nii", &i, &attacker, &distance)) {
        return NULL;
    }
    nh_fight *fight = fight_at(self, i);
    if (fight == NULL) {
        return NULL;
    }
    if (attacker != 0 && attacker != 1) {
        return PyErr_Format(PyExc_IndexError, "attacker must be 0 or 1, got %d", attacker);
    }
    nh_attack_outcome out;
    int err = nh_create_hits(&fight->rng, &fight->players[attacker], &fight->players[1 - attacker], distance, &out);
    if (err) {
        return combat_error(err);
    }
    nh_player view; /* hit_queue_list reads a player's queue: lend it the outcome's hits */
    view.n_hit_queue = out.n_hits;
    memcpy(view.hit_queue, out.hits, sizeof(out.hits));
    return Py_BuildValue("{s:i,s:N,s:i,s:i,s:i,s:i,s:N}", "method", out.method, "hits", hit_queue_list(&view),
                         "energy_cost", out.energy_cost, "attack_speed", out.attack_speed, "freeze_ticks",
                         out.freeze_ticks, "heal", out.heal, "spell",
                         out.spell == NH_NO_SPELL ? Py_NewRef(Py_None) : PyLong_FromLong(out.spell));
}

/* combat_numbers(i, attacker, method): the pure functions of combat.py for one method. */
static PyObject *FightBatch_combat_numbers(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int attacker, method;
    if (!PyArg_ParseTuple(args, "nii", &i, &attacker, &method)) {
        return NULL;
    }
    nh_fight *fight = fight_at(self, i);
    if (fight == NULL) {
        return NULL;
    }
    if ((attacker != 0 && attacker != 1) || method < 0 || method >= NH_NUM_METHODS) {
        return PyErr_Format(PyExc_IndexError, "attacker must be 0 or 1 and method 0..%d", NH_NUM_METHODS - 1);
    }
    const nh_player *a = &fight->players[attacker], *d = &fight->players[1 - attacker];
    int64_t range[2];
    int err = nh_damage_range(a, method, range);
    if (err) {
        return combat_error(err);
    }
    return Py_BuildValue("{s:L,s:L,s:(LL),s:i,s:i,s:i}", "attack_roll", (long long)nh_attack_roll(a, method),
                         "defence_roll", (long long)nh_defence_roll(d, method, a), "damage_range",
                         (long long)range[0], (long long)range[1], "attack_range", nh_attack_range(a, method),
                         "attack_speed", nh_attack_speed(a, method), "combat_method", nh_combat_method(a));
}

/* Operations of FightBatch.movement, named as the movement.py functions they run. */
static const char *const MOVEMENT_OPS[] = {"follow", "take_steps", "can_reach", "append_path", "reset_walk",
                                           "queue_end", "distance", "in_melee_range", NULL};

/* movement(i, p, op, a=0, b=0, c=0): follow(p, other, melee=a, range=b); take_steps(p);
 * can_reach(p, other, melee=a, range=b, side_effect=c) -> bool; append_path(p, a, b, diagonal_first=c);
 * reset_walk(p); queue_end(p) -> (x, y); distance(p, other); in_melee_range(p, other) -> bool. */
static PyObject *FightBatch_movement(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which, a = 0, b = 0, c = 0;
    const char *op;
    if (!PyArg_ParseTuple(args, "nis|iii", &i, &which, &op, &a, &b, &c)) {
        return NULL;
    }
    nh_fight *fight = fight_player_at(self, i, which);
    if (fight == NULL) {
        return NULL;
    }
    nh_player *p = &fight->players[which], *other = &fight->players[1 - which];
    int err = 0;
    PyObject *result = NULL;
    if (strcmp(op, "follow") == 0) {
        err = nh_follow(p, other, a, b);
        result = Py_NewRef(Py_None);
    } else if (strcmp(op, "take_steps") == 0) {
        nh_take_steps(p);
        result = Py_NewRef(Py_None);
    } else if (strcmp(op, "can_reach") == 0) {
        result = PyBool_FromLong(nh_can_reach(p, other, a, b, c, &err));
    } else if (strcmp(op, "append_path") == 0) {
        err = nh_append_path(p, a, b, c);
        result = Py_NewRef(Py_None);
    } else if (strcmp(op, "reset_walk") == 0) {
        nh_reset_walk(p);
        result = Py_NewRef(Py_None);
    } else if (strcmp(op, "queue_end") == 0) {
        int32_t x, y;
        nh_queue_end(p, &x, &y);
        result = Py_BuildValue("(ii)", x, y);
    } else if (strcmp(op, "distance") == 0) {
        result = PyLong_FromLong(nh_distance(p, other));
    } else if (strcmp(op, "in_melee_range") == 0) {
        result = PyBool_FromLong(nh_in_melee_range(p, other));
    } else {
        PyObject *names = PyList_New(0);
        for (int k = 0; names && MOVEMENT_OPS[k]; k++) {
            PyObject *name = PyUnicode_FromString(MOVEMENT_OPS[k]);
            if (name == NULL || PyList_Append(names, name) != 0) {
                Py_XDECREF(name);
                Py_CLEAR(names);
                break;
            }
            Py_DECREF(name);
        }
        if (names != NULL) {
            PyErr_Format(PyExc_ValueError, "no movement operation '%s'; valid: %R", op, names);
            Py_DECREF(names);
        }
        return NULL;
    }
    if (err) {
        Py_XDECREF(result);
        return PyErr_Format(PyExc_RuntimeError, "walk queue overflow (more than %d tiles)", NH_MAX_WALK_QUEUE);
    }
    return result;
}

static PyObject *id_or_none_slot(int32_t slot) {
    if (slot < 0) {
        Py_RETURN_NONE;
    }
    return PyLong_FromLong(slot);
}

/* operation(i, p, op, a=0, b=0): activate_prayer(a) -> bool; deactivate_all_prayers; heal(a, cap=b) -> int;
 * effect_heal(a) -> int; eat_food(a) -> bool; eat_karambwan -> bool; drink_potion(a, fewest_first=b) -> bool;
 * find_potion(a, fewest_first=b) -> slot or None; cast_vengeance -> bool; primary_food -> id or None;
 * has_any_food -> bool; nominal_heal(a) -> int (the player's base hitpoints); can_activate(a) -> bool. */
static PyObject *FightBatch_operation(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which, a = 0, b = 0;
    const char *op;
    if (!PyArg_ParseTuple(args, "nis|ii", &i, &which, &op, &a, &b)) {
        return NULL;
    }
    nh_fight *fight = fight_player_at(self, i, which);
    if (fight == NULL) {
        return NULL;
    }
    nh_player *p = &fight->players[which];
    int prayer_op = strcmp(op, "activate_prayer") == 0 || strcmp(op, "can_activate") == 0;
    int potion_op = strcmp(op, "drink_potion") == 0 || strcmp(op, "find_potion") == 0;
    if ((prayer_op && (a < 0 || a >= NH_NUM_PRAYERS)) || (potion_op && (a < NH_POTION_BREW || a > NH_POTION_RANGING))) {
        return PyErr_Format(PyExc_ValueError, "%s: argument %d out of range", op, a);
    }
    if (strcmp(op, "activate_prayer") == 0) {
        return PyBool_FromLong(nh_activate_prayer(p, a));
    }
    if (strcmp(op, "can_activate") == 0) {
        return PyBool_FromLong(nh_can_activate(p, a));
    }
    if (strcmp(op, "deactivate_all_prayers") == 0) {
        nh_deactivate_all_prayers(p);
        Py_RETURN_NONE;
    }
    if (strcmp(op, "heal") == 0) {
        return PyLong_FromLong(nh_heal(p, a, b));
    }
    if (strcmp(op, "effect_heal") == 0) {
        return PyLong_FromLong(nh_effect_heal(p, a));
    }
    if (strcmp(op, "eat_food") == 0) {
        return PyBool_FromLong(nh_eat_food(p, a));
    }
    if (strcmp(op, "eat_karambwan") == 0) {
        return PyBool_FromLong(nh_eat_karambwan(p));
    }
    if (strcmp(op, "drink_potion") == 0) {
        return PyBool_FromLong(nh_drink_potion(p, a, b));
    }
    if (strcmp(op, "find_potion") == 0) {
        return id_or_none_slot(nh_find_potion(p, a, b));
    }
    if (strcmp(op, "cast_vengeance") == 0) {
        return PyBool_FromLong(nh_cast_vengeance(p));
    }
    if (strcmp(op, "primary_food") == 0) {
        return id_or_none(nh_primary_food(p));
    }
    if (strcmp(op, "has_any_food") == 0) {
        return PyBool_FromLong(nh_has_any_food(p));
    }
    if (strcmp(op, "nominal_heal") == 0) {
        return PyLong_FromLong(nh_nominal_heal(a, p->base[NH_SKILL_HITPOINTS]));
    }
    return PyErr_Format(PyExc_ValueError, "no operation '%s' (see FightBatch.operation's doc in nhcore_module.c)", op);
}

static PyObject *outcome_name(int32_t o) {
    static const char *const names[] = {NULL, "won", "lost", "tied"};
    if (o == NH_OUTCOME_NONE) {
        Py_RETURN_NONE;
    }
    return PyUnicode_FromString(names[o]);
}

static PyObject *sim_error(int err) {
    switch (err) {
    case NH_ERR_FIGHT_OVER:
        return PyErr_Format(PyExc_RuntimeError, "the fight is over: call reset() before stepping again (spec spec 16.3)");
    default:
        return PyErr_Format(PyExc_RuntimeError, "broken bound in the core (error %d): a queue or the task list is full",
                            err);
    }
}

/* step(i, actions=None): one tick of fight i; actions is a pair of 12-int sequences or None entries. */
static PyObject *FightBatch_step(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    PyObject *actions_obj = Py_None;
    if (!PyArg_ParseTuple(args, "n|O", &i, &actions_obj)) {
        return NULL;
    }
    nh_fight *fight = fight_at(self, i);
    if (fight == NULL) {
        return NULL;
    }
    int32_t actions[2][12] = {{0}};
    int has_action[2] = {0, 0};
    if (actions_obj != Py_None) {
        PyObject *pair = PySequence_Fast(actions_obj, "actions must be a pair (player 0, player 1)");
        if (pair == NULL) {
            return NULL;
        }
        if (PySequence_Fast_GET_SIZE(pair) != 2) {
            Py_DECREF(pair);
            return PyErr_Format(PyExc_ValueError, "actions must hold one entry per player (2)");
        }
        for (int k = 0; k < 2; k++) {
            PyObject *one = PySequence_Fast_GET_ITEM(pair, k);
            if (one == Py_None) {
                continue;
            }
            if (seq_ints(one, "action", actions[k], 12, 0, NULL)) {
                Py_DECREF(pair);
                return NULL;
            }
            has_action[k] = 1;
        }
        Py_DECREF(pair);
    }
    nh_tick_result result;
    int err = nh_step(fight, (const int32_t(*)[12])actions, has_action, &result);
    if (err) {
        return sim_error(err);
    }
    if (self->weights != NULL) {
        nh_step_rewards(fight, self->weights, result.outcomes, &self->rewards[i]);
    }
    return Py_BuildValue("{s:i,s:(NN),s:O}", "tick", result.tick, "outcomes", outcome_name(result.outcomes[0]),
                         outcome_name(result.outcomes[1]), "truncated", result.truncated ? Py_True : Py_False);
}

/* Acquire a C-contiguous writable buffer of exactly `items` floating-point items of numpy format `code`
 * ('f' float32, 'd' float64) and `size` bytes each. */
static int get_buffer_float(PyObject *obj, Py_buffer *view, Py_ssize_t items, char code, Py_ssize_t size,
                            const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous writable numpy array", what);
        return -1;
    }
    const char *fmt = view->format ? view->format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@') {
        fmt++;
    }
    if (view->itemsize != size || fmt[0] != code || fmt[1] != '\0') {
        PyErr_Format(PyExc_TypeError, "%s must have dtype %s (got format '%s')", what,
                     code == 'f' ? "float32" : "float64", fmt);
        PyBuffer_Release(view);
        return -1;
    }
    if (view->len / size != items) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd items (got %zd)", what, items, view->len / size);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int get_buffer_f32(PyObject *obj, Py_buffer *view, Py_ssize_t items, const char *what) {
    return get_buffer_float(obj, view, items, 'f', 4, what);
}

/* Acquire a C-contiguous buffer of 1-byte items (numpy bool or uint8) of exactly `items` items, writable. */
static int get_buffer8(PyObject *obj, Py_buffer *view, Py_ssize_t items, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous writable numpy array", what);
        return -1;
    }
    const char *fmt = view->format ? view->format : "B";
    if (view->itemsize != 1 || (strcmp(fmt, "?") != 0 && strcmp(fmt, "B") != 0)) {
        PyErr_Format(PyExc_TypeError, "%s must have dtype bool or uint8 (got format '%s')", what, fmt);
        PyBuffer_Release(view);
        return -1;
    }
    if (view->len != items) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd items (got %zd)", what, items, view->len);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* write_masks(masks): both players' masks of every fight into a bool/uint8 (n, 2, 45) array (after resets). */
static PyObject *FightBatch_write_masks(FightBatchObject *self, PyObject *args) {
    PyObject *masks_obj, *obs_obj = Py_None;
    Py_ssize_t only = -1;
    if (!PyArg_ParseTuple(args, "O|On", &masks_obj, &obs_obj, &only)) {
        return NULL;
    }
    if (self->fights == NULL) {
        return PyErr_Format(PyExc_RuntimeError, "FightBatch is not initialised");
    }
    if (only >= self->n) {
        return PyErr_Format(PyExc_IndexError, "fight %zd out of range (batch of %zd)", only, self->n);
    }
    Py_buffer masks;
    if (get_buffer8(masks_obj, &masks, self->n * 2 * NH_NUM_MASK, "masks")) {
        return NULL;
    }
    Py_buffer obs;
    float *o = NULL;
    if (obs_obj != Py_None) {
        if (get_buffer_f32(obs_obj, &obs, self->n * 2 * NH_OBS_SIZE, "observations")) {
            PyBuffer_Release(&masks);
            return NULL;
        }
        o = (float *)obs.buf;
    }
    uint8_t *m = (uint8_t *)masks.buf;
    for (Py_ssize_t i = only < 0 ? 0 : only; i < (only < 0 ? self->n : only + 1); i++) {
        for (int p = 0; p < 2; p++) {
            const nh_fight *fight = &self->fights[i];
            uint8_t *mp = m + (i * 2 + p) * NH_NUM_MASK;
            nh_mask_values(fight, &fight->players[p], fight->stats[p].known_lunar_opponent, mp);
            if (o != NULL) {
                nh_encode_observation(fight, &fight->players[p], mp, o + (i * 2 + p) * NH_OBS_SIZE);
            }
        }
    }
    PyBuffer_Release(&masks);
    if (o != NULL) {
        PyBuffer_Release(&obs);
    }
    Py_RETURN_NONE;
}

static PyObject *step_batch_inner(FightBatchObject *self, PyObject *actions_obj, PyObject *has_obj,
                                  PyObject *results_obj, PyObject *masks_obj, PyObject *obs_obj, double *rew_out,
                                  double *comp_out, Py_ssize_t only);

static int get_buffer_f64(PyObject *obj, Py_buffer *view, Py_ssize_t items, const char *what) {
    return get_buffer_float(obj, view, items, 'd', 8, what);
}

/* step_batch(actions, has_action, results, masks=None): one tick of every running fight, in one call.
 * actions int32 (n, 2, 12), has_action int32 (n, 2), results int32 (n, 4) written per fight:
 * (tick, outcome of player 0, outcome of player 1, truncated) with outcomes 0 none, 1 won, 2 lost, 3 tied;
 * a fight that is done is skipped (its row untouched). Returns how many fights stepped. No Python object
 * is made per fight: this is the batch API's tick. With `masks` (bool/uint8 (n, 2, 45)) and `obs` (float32
 * (n, 2, 176)), both players' masks and observations of every stepped fight are written after its tick
 * With reward weights set, each stepped fight's rewards (§17) are computed; `rewards` (float64 (n, 2)) and
 * `components` (float64 (n, 2, len(REWARD_COMPONENTS))) receive them (0 for a baseline player). */
static PyObject *FightBatch_step_batch(FightBatchObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"actions", "has_action", "results", "masks",  "obs",
                             "rewards", "components", "only",    NULL};
    PyObject *actions_obj, *has_obj, *results_obj, *masks_obj = Py_None, *obs_obj = Py_None;
    PyObject *rewards_obj = Py_None, *components_obj = Py_None;
    Py_ssize_t only = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|OOOOn", kwlist, &actions_obj, &has_obj, &results_obj,
                                     &masks_obj, &obs_obj, &rewards_obj, &components_obj, &only)) {
        return NULL;
    }
    if (only >= self->n) {
        return PyErr_Format(PyExc_IndexError, "fight %zd out of range (batch of %zd)", only, self->n);
    }
    if ((rewards_obj != Py_None || components_obj != Py_None) && self->weights == NULL) {
        return PyErr_Format(PyExc_ValueError, "rewards need reward weights: call set_reward_weights first");
    }
    Py_buffer rewards_view, components_view;
    double *rew_out = NULL, *comp_out = NULL;
    if (rewards_obj != Py_None) {
        if (get_buffer_f64(rewards_obj, &rewards_view, self->n * 2, "rewards")) {
            return NULL;
        }
        rew_out = (double *)rewards_view.buf;
    }
    if (components_obj != Py_None) {
        if (get_buffer_f64(components_obj, &components_view, self->n * 2 * NH_NUM_REWARD_COMPONENTS, "components")) {
            if (rew_out != NULL) {
                PyBuffer_Release(&rewards_view);
            }
            return NULL;
        }
        comp_out = (double *)components_view.buf;
    }
    PyObject *out =
        step_batch_inner(self, actions_obj, has_obj, results_obj, masks_obj, obs_obj, rew_out, comp_out, only);
    if (rew_out != NULL) {
        PyBuffer_Release(&rewards_view);
    }
    if (comp_out != NULL) {
        PyBuffer_Release(&components_view);
    }
    return out;
}

static PyObject *step_batch_inner(FightBatchObject *self, PyObject *actions_obj, PyObject *has_obj,
                                  PyObject *results_obj, PyObject *masks_obj, PyObject *obs_obj, double *rew_out,
                                  double *comp_out, Py_ssize_t only) {
    if (obs_obj != Py_None && masks_obj == Py_None) {
        return PyErr_Format(PyExc_ValueError, "observations need the masks array too (entries 168-174 repeat masks)");
    }
    if (self->fights == NULL) {
        return PyErr_Format(PyExc_RuntimeError, "FightBatch is not initialised");
    }
    Py_buffer actions, has, results;
    if (get_buffer32(actions_obj, &actions, 0, self->n * 2 * 12, "actions")) {
        return NULL;
    }
    if (get_buffer32(has_obj, &has, 0, self->n * 2, "has_action")) {
        PyBuffer_Release(&actions);
        return NULL;
    }
    if (get_buffer32(results_obj, &results, 1, self->n * 4, "results")) {
        PyBuffer_Release(&actions);
        PyBuffer_Release(&has);
        return NULL;
    }
    Py_buffer masks;
    uint8_t *mask_out = NULL;
    if (masks_obj != Py_None) {
        if (get_buffer8(masks_obj, &masks, self->n * 2 * NH_NUM_MASK, "masks")) {
            PyBuffer_Release(&actions);
            PyBuffer_Release(&has);
            PyBuffer_Release(&results);
            return NULL;
        }
        mask_out = (uint8_t *)masks.buf;
    }
    Py_buffer obs;
    float *obs_out = NULL;
    if (obs_obj != Py_None) {
        if (get_buffer_f32(obs_obj, &obs, self->n * 2 * NH_OBS_SIZE, "observations")) {
            PyBuffer_Release(&actions);
            PyBuffer_Release(&has);
            PyBuffer_Release(&results);
            PyBuffer_Release(&masks);
            return NULL;
        }
        obs_out = (float *)obs.buf;
    }
    const int32_t(*act)[2][12] = (const int32_t(*)[2][12])actions.buf;
    const int32_t(*flags)[2] = (const int32_t(*)[2])has.buf;
    int32_t(*out)[4] = (int32_t(*)[4])results.buf;
    Py_ssize_t stepped = 0, failed = -1;
    int err = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = only < 0 ? 0 : only; i < (only < 0 ? self->n : only + 1); i++) {
        nh_fight *fight = &self->fights[i];
        if (fight->done) {
            continue;
        }
        int has_action[2] = {flags[i][0] != 0, flags[i][1] != 0};
        nh_tick_result r;
        err = nh_step(fight, act[i], has_action, &r);
        if (err) {
            failed = i;
            break;
        }
        out[i][0] = r.tick;
        out[i][1] = r.outcomes[0];
        out[i][2] = r.outcomes[1];
        out[i][3] = r.truncated;
        if (self->weights != NULL) {
            nh_reward_state *rs = &self->rewards[i];
            nh_step_rewards(fight, self->weights, r.outcomes, rs);
            if (rew_out != NULL) {
                rew_out[i * 2] = rs->rewards[0];
                rew_out[i * 2 + 1] = rs->rewards[1];
            }
            if (comp_out != NULL) {
                memcpy(comp_out + i * 2 * NH_NUM_REWARD_COMPONENTS, rs->parts, sizeof(rs->parts));
            }
        }
        if (mask_out != NULL) {
            for (int p = 0; p < 2; p++) {
                uint8_t *m = mask_out + (i * 2 + p) * NH_NUM_MASK;
                nh_mask_values(fight, &fight->players[p], fight->stats[p].known_lunar_opponent, m);
                if (obs_out != NULL) {
                    nh_encode_observation(fight, &fight->players[p], m, obs_out + (i * 2 + p) * NH_OBS_SIZE);
                }
            }
        }
        stepped++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&actions);
    PyBuffer_Release(&has);
    PyBuffer_Release(&results);
    if (mask_out != NULL) {
        PyBuffer_Release(&masks);
    }
    if (obs_out != NULL) {
        PyBuffer_Release(&obs);
    }
    if (failed >= 0) {
        return PyErr_Format(PyExc_RuntimeError, "fight %zd: error %d in the core (reset it; a done fight is skipped)",
                            failed, err);
    }
    return PyLong_FromSsize_t(stepped);
}

/* events(i, p): TickEvents of player p (hit records without the delay, see nh_hit_record). */
static PyObject *FightBatch_events(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = fight_args(self, args, &i, &which);
    if (fight == NULL) {
        return NULL;
    }
    const nh_tick_events *ev = &fight->events[which];
    PyObject *hits = PyList_New(ev->n_hits);
    for (int32_t k = 0; hits && k < ev->n_hits; k++) {
        const nh_hit_record *r = &ev->hits[k];
        PyObject *item = Py_BuildValue("{s:i,s:N,s:O,s:i,s:i,s:i,s:N,s:O}", "attacker", r->hit.attacker, "damages",
                                       int_list(r->hit.damages, r->hit.n_damages), "accurate",
                                       r->hit.accurate ? Py_True : Py_False, "style", r->hit.style, "effect",
                                       r->hit.effect, "attack_speed", r->attack_speed, "defender_protection",
                                       int_or_none(r->defender_protection), "smite", r->smite ? Py_True : Py_False);
        if (item == NULL) {
            Py_CLEAR(hits);
            break;
        }
        PyList_SET_ITEM(hits, k, item);
    }
    if (hits == NULL) {
        return NULL;
    }
    return Py_BuildValue("{s:N,s:i,s:i,s:N,s:i,s:i}", "hits", hits, "extra_damage_dealt", ev->extra_damage_dealt,
                         "healed", ev->healed, "eat_at_hp",
                         ev->eat_at_hp == NH_NO_VALUE ? Py_NewRef(Py_None) : PyLong_FromLong(ev->eat_at_hp),
                         "wasted_food", ev->wasted_food, "wasted_brew", ev->wasted_brew);
}

/* stats(i, p): EpisodeStats of player p. */
static PyObject *FightBatch_stats(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = fight_args(self, args, &i, &which);
    if (fight == NULL) {
        return NULL;
    }
    const nh_episode_stats *st = &fight->stats[which];
    PyObject *recent = PyList_New(st->n_recent), *prayed = PyList_New(st->n_recent_prayed), *samples = PyList_New(3);
    for (int32_t k = 0; recent && k < st->n_recent; k++) {
        const int32_t *r = st->recent[(st->recent_head + k) % NH_RECENT_WINDOW];
        PyList_SET_ITEM(recent, k, Py_BuildValue("(iO)", r[0], r[1] ? Py_True : Py_False));
    }
    for (int32_t k = 0; prayed && k < st->n_recent_prayed; k++) {
        PyList_SET_ITEM(prayed, k, PyLong_FromLong(st->recent_prayed[(st->recent_prayed_head + k) % NH_RECENT_WINDOW]));
    }
    for (int k = 0; samples && k < 3; k++) {
        PyList_SET_ITEM(samples, k,
                        st->has_gear_sample[k] ? int_list(st->gear_samples[k], NH_NUM_BONUSES) : Py_NewRef(Py_None));
    }
    if (recent == NULL || prayed == NULL || samples == NULL) {
        Py_XDECREF(recent);
        Py_XDECREF(prayed);
        Py_XDECREF(samples);
        return NULL;
    }
    return Py_BuildValue("{s:i,s:N,s:N,s:i,s:N,s:N,s:N,s:d,s:d,s:d,s:O}", "n_hits", st->n_hits, "style_counts",
                         int_list(st->style_counts, 3), "defender_prayer_counts", int_list(st->defender_prayer_counts, 3),
                         "protected_count", st->protected_count, "recent", recent, "recent_prayed", prayed,
                         "gear_samples", samples, "dealt_scale_sum", st->dealt_scale_sum, "received_scale_sum",
                         st->received_scale_sum, "observed_opponent_hp", st->observed_opponent_hp,
                         "known_lunar_opponent", st->known_lunar_opponent ? Py_True : Py_False);
}

/* activate_prayer(i, p, prayer) / drain_special(i, p, amount): FightSim's shared mechanisms (they schedule tasks). */
static PyObject *FightBatch_sim_op(FightBatchObject *self, PyObject *args, int drain) {
    Py_ssize_t i;
    int which, value;
    if (!PyArg_ParseTuple(args, "nii", &i, &which, &value)) {
        return NULL;
    }
    nh_fight *fight = fight_player_at(self, i, which);
    if (fight == NULL) {
        return NULL;
    }
    if (!drain && (value < 0 || value >= NH_NUM_PRAYERS)) {
        return PyErr_Format(PyExc_ValueError, "no prayer %d", value);
    }
    if (drain) {
        nh_sim_drain_special(fight, &fight->players[which], value);
    } else {
        nh_sim_activate_prayer(fight, &fight->players[which], value);
    }
    if (fight->error) {
        return sim_error(fight->error);
    }
    Py_RETURN_NONE;
}

static PyObject *FightBatch_activate_prayer(FightBatchObject *self, PyObject *args) {
    return FightBatch_sim_op(self, args, 0);
}

static PyObject *FightBatch_drain_special(FightBatchObject *self, PyObject *args) {
    return FightBatch_sim_op(self, args, 1);
}

/* tasks(i): (kind, next_tick, period) of every scheduled task, in creation order. */
static PyObject *FightBatch_tasks(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    nh_fight *fight = fight_args(self, args, &i, NULL);
    if (fight == NULL) {
        return NULL;
    }
    static const char *const kinds[] = {"retaliation", "sacrifice", "bleed", "poison", "special_regen", "prayer_drain"};
    PyObject *list = PyList_New(fight->n_tasks);
    for (int32_t k = 0; list && k < fight->n_tasks; k++) {
        const nh_task *t = &fight->tasks[k];
        PyObject *item = Py_BuildValue("(sii)", kinds[t->kind], t->next_tick, t->period);
        if (item == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, item);
    }
    return list;
}

/* masks(i, p): masks.mask_values of player p (known_lunar from its EpisodeStats, as engine.py passes it). */
static PyObject *FightBatch_masks(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = fight_args(self, args, &i, &which);
    if (fight == NULL) {
        return NULL;
    }
    uint8_t m[NH_NUM_MASK];
    nh_mask_values(fight, &fight->players[which], fight->stats[which].known_lunar_opponent, m);
    PyObject *list = PyList_New(NH_NUM_MASK);
    for (int k = 0; list && k < NH_NUM_MASK; k++) {
        PyList_SET_ITEM(list, k, PyBool_FromLong(m[k]));
    }
    return list;
}

/* observation(i, p): player p's §15.2 observation (its masks computed first, as engine.py does) as floats. */
static PyObject *FightBatch_observation(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = fight_args(self, args, &i, &which);
    if (fight == NULL) {
        return NULL;
    }
    uint8_t m[NH_NUM_MASK];
    float obs[NH_OBS_SIZE];
    nh_mask_values(fight, &fight->players[which], fight->stats[which].known_lunar_opponent, m);
    nh_encode_observation(fight, &fight->players[which], m, obs);
    PyObject *list = PyList_New(NH_OBS_SIZE);
    for (int k = 0; list && k < NH_OBS_SIZE; k++) {
        PyList_SET_ITEM(list, k, PyFloat_FromDouble(obs[k]));
    }
    return list;
}

/* fight(i): the fight-level fields of FightSim. */
static PyObject *FightBatch_fight(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    nh_fight *fight = fight_args(self, args, &i, NULL);
    if (fight == NULL) {
        return NULL;
    }
    return Py_BuildValue("{s:i,s:O,s:i,s:i}", "tick", fight->tick, "done", fight->done ? Py_True : Py_False,
                         "fight_mode", fight->fight_mode, "build", fight->build);
}

static PyObject *FightBatch_len(FightBatchObject *self, void *closure) {
    (void)closure;
    return PyLong_FromSsize_t(self->n);
}

/* ---- rewards (§17) ---- */

/* RewardWeights field names, by nh_scheduled_weight / nh_weight_switch (names only: the values and their
 * defaults come from Python). */
static const char *const SCHEDULED_WEIGHT_NAMES[NH_NUM_SCHEDULED_WEIGHTS] = {
    "default_reward", "win_reward", "lose_reward", "tie_reward", "damage_dealt_reward_scale",
    "damage_received_reward_scale", "target_frozen_tick_reward", "player_frozen_tick_reward", "protected_correct",
    "protected_wrong", "attacked_correct", "attacked_wrong", "protected_prev_correct", "protected_prev_wrong",
    "attacked_prev_correct", "attacked_prev_wrong", "attack_level_scale_reward", "strength_level_scale_reward",
    "defence_level_scale_reward", "ranged_level_scale_reward", "magic_level_scale_reward",
    "reward_on_hit_with_boost_scale", "smite_dealt_multiplier", "smite_received_multiplier", "safe_penalty",
    "no_prayer_tick_reward", "player_wasted_food_multiplier",
};
static const char *const SWITCH_NAMES[NH_NUM_WEIGHT_SWITCHES] = {
    "penalize_food_on_death", "reward_target_food_on_death", "penalize_wasted_food", "reward_on_damage_generated",
    "reward_heals", "penalize_target_heals",
};
static const char *const REWARD_COMPONENT_NAMES[NH_NUM_REWARD_COMPONENTS] = {
    "default", "damage", "smite", "heals", "safe", "no_prayer", "prayer", "off_prayer_hits", "freeze", "levels",
    "boosted_hits", "wasted_food", "outcome", "food_on_death",
};

static PyObject *weight_item(PyObject *mapping, const char *name) {
    PyObject *v = PyMapping_GetItemString(mapping, name);
    if (v == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_KeyError, "reward weights lack %s (pass every RewardWeights field)", name);
    }
    return v;
}

static int finite_double(PyObject *v, const char *name, double *out) {
    if (PyBool_Check(v) || !(PyFloat_Check(v) || PyLong_Check(v))) {
        PyErr_Format(PyExc_TypeError, "reward weight %s must be a number", name);
        return -1;
    }
    double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) {
        return -1;
    }
    if (!isfinite(d)) {
        PyErr_Format(PyExc_ValueError, "reward weight %s must be finite", name);
        return -1;
    }
    *out = d;
    return 0;
}

static int parse_schedule(PyObject *v, const char *name, nh_schedule *out) {
    if (PyFloat_Check(v) || PyLong_Check(v)) {
        out->is_schedule = 0;
        out->b = out->n = 0.0;
        return finite_double(v, name, &out->a);
    }
    PyObject *seq = PySequence_Fast(v, "schedule");
    if (seq == NULL || PySequence_Fast_GET_SIZE(seq) != 3) {
        Py_XDECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "reward weight %s must be a number or (a, b, n)", name);
        return -1;
    }
    int err = finite_double(PySequence_Fast_GET_ITEM(seq, 0), name, &out->a) ||
              finite_double(PySequence_Fast_GET_ITEM(seq, 1), name, &out->b) ||
              finite_double(PySequence_Fast_GET_ITEM(seq, 2), name, &out->n);
    Py_DECREF(seq);
    out->is_schedule = 1;
    return err ? -1 : 0;
}

/* set_reward_weights(mapping): parsed whole into a scratch struct first, so bad input changes nothing. */
static PyObject *FightBatch_set_reward_weights(FightBatchObject *self, PyObject *mapping) {
    if (!PyMapping_Check(mapping)) {
        return PyErr_Format(PyExc_TypeError, "reward weights must be a mapping of RewardWeights fields");
    }
    nh_reward_weights w;
    memset(&w, 0, sizeof(w));
    for (int k = 0; k < NH_NUM_SCHEDULED_WEIGHTS; k++) {
        PyObject *v = weight_item(mapping, SCHEDULED_WEIGHT_NAMES[k]);
        if (v == NULL) {
            return NULL;
        }
        int err = parse_schedule(v, SCHEDULED_WEIGHT_NAMES[k], &w.scheduled[k]);
        Py_DECREF(v);
        if (err) {
            return NULL;
        }
    }
    static const char *const floats[2] = {"player_died_with_food_exponent", "player_died_with_food_offset"};
    double *float_out[2] = {&w.died_with_food_exponent, &w.died_with_food_offset};
    for (int k = 0; k < 2; k++) {
        PyObject *v = weight_item(mapping, floats[k]);
        if (v == NULL) {
            return NULL;
        }
        int err = finite_double(v, floats[k], float_out[k]);
        Py_DECREF(v);
        if (err) {
            return NULL;
        }
    }
    for (int k = 0; k < NH_NUM_WEIGHT_SWITCHES; k++) {
        PyObject *v = weight_item(mapping, SWITCH_NAMES[k]);
        if (v == NULL) {
            return NULL;
        }
        int ok = PyBool_Check(v);
        w.switches[k] = v == Py_True;
        Py_DECREF(v);
        if (!ok) {
            return PyErr_Format(PyExc_TypeError, "reward weight %s must be true or false", SWITCH_NAMES[k]);
        }
    }
    if (self->weights == NULL) {
        self->weights = PyMem_Calloc(1, sizeof(nh_reward_weights));
        if (self->weights == NULL) {
            return PyErr_NoMemory();
        }
    } else {
        w.progress = self->weights->progress;
    }
    nh_set_reward_progress(&w, w.progress);
    *self->weights = w;
    Py_RETURN_NONE;
}

static PyObject *FightBatch_get_progress(FightBatchObject *self, void *closure) {
    (void)closure;
    return PyFloat_FromDouble(self->weights != NULL ? self->weights->progress : 0.0);
}

static int FightBatch_set_progress(FightBatchObject *self, PyObject *value, void *closure) {
    (void)closure;
    if (self->weights == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "set_reward_weights before setting progress");
        return -1;
    }
    double d;
    if (value == NULL || finite_double(value, "progress", &d)) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "progress cannot be deleted");
        }
        return -1;
    }
    nh_set_reward_progress(self->weights, d);
    return 0;
}

static PyObject *style_name(int32_t style) { /* rewards.STYLE_NAMES, "null" for none (§17.1) */
    static const char *const names[3] = {"MELEE", "RANGED", "MAGIC"};
    return PyUnicode_FromString(style >= 0 && style < 3 ? names[style] : "null");
}

static int set_item(PyObject *d, const char *key, PyObject *v) {
    if (v == NULL) {
        return -1;
    }
    int err = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return err;
}

static PyObject *signals_dict(const nh_signals *s) {
    PyObject *d = PyDict_New();
    if (d == NULL) {
        return NULL;
    }
    int err = set_item(d, "damageGeneratedOnTargetScale", PyFloat_FromDouble(s->damage_generated_on_target_scale)) ||
              set_item(d, "damageGeneratedOnPlayerScale", PyFloat_FromDouble(s->damage_generated_on_player_scale)) ||
              set_item(d, "damageDealt", PyFloat_FromDouble(s->damage_dealt)) ||
              set_item(d, "damageReceived", PyFloat_FromDouble(s->damage_received)) ||
              set_item(d, "extraDamageDealtOnTargetScale", PyFloat_FromDouble(s->extra_damage_dealt_on_target_scale)) ||
              set_item(d, "extraDamageDealtOnPlayerScale", PyFloat_FromDouble(s->extra_damage_dealt_on_player_scale)) ||
              set_item(d, "hitWithSmite", PyBool_FromLong(s->hit_with_smite)) ||
              set_item(d, "targetAttackedWithSmite", PyBool_FromLong(s->target_attacked_with_smite)) ||
              set_item(d, "playerHealedScale", PyFloat_FromDouble(s->player_healed_scale)) ||
              set_item(d, "targetHealedScale", PyFloat_FromDouble(s->target_healed_scale)) ||
              set_item(d, "currentTargetPrayerType", style_name(s->current_target_prayer_type)) ||
              set_item(d, "targetAttackStyleType", style_name(s->target_attack_style_type)) ||
              set_item(d, "playerFrozenTicks", PyLong_FromLong(s->player_frozen_ticks)) ||
              set_item(d, "targetFrozenTicks", PyLong_FromLong(s->target_frozen_ticks)) ||
              set_item(d, "currentPrayerPercent", PyFloat_FromDouble(s->current_prayer_percent)) ||
              set_item(d, "attackLevelScale", PyFloat_FromDouble(s->attack_level_scale)) ||
              set_item(d, "strengthLevelScale", PyFloat_FromDouble(s->strength_level_scale)) ||
              set_item(d, "defenceLevelScale", PyFloat_FromDouble(s->defence_level_scale)) ||
              set_item(d, "rangedLevelScale", PyFloat_FromDouble(s->ranged_level_scale)) ||
              set_item(d, "magicLevelScale", PyFloat_FromDouble(s->magic_level_scale)) ||
              set_item(d, "remainingFoodScale", PyFloat_FromDouble(s->remaining_food_scale)) ||
              set_item(d, "targetRemainingFoodScale", PyFloat_FromDouble(s->target_remaining_food_scale)) ||
              set_item(d, "remainingBrewScale", PyFloat_FromDouble(s->remaining_brew_scale)) ||
              set_item(d, "targetRemainingBrewScale", PyFloat_FromDouble(s->target_remaining_brew_scale));
    if (!err && s->has_received) {
        err = set_item(d, "protectedPrayer", PyBool_FromLong(s->protected_prayer)) ||
              set_item(d, "targetHitAttackSpeed", PyLong_FromLong(s->target_hit_attack_speed)) ||
              set_item(d, "attackTypeReceived", style_name(s->attack_type_received)) ||
              set_item(d, "playerPrayerType", style_name(s->player_prayer_type));
    }
    if (!err && s->has_hit) {
        err = set_item(d, "hitOffPrayer", PyBool_FromLong(s->hit_off_prayer)) ||
              set_item(d, "playerHitAttackSpeed", PyLong_FromLong(s->player_hit_attack_speed)) ||
              set_item(d, "attackTypeHit", style_name(s->attack_type_hit)) ||
              set_item(d, "targetPrayerType", style_name(s->target_prayer_type));
    }
    if (!err && s->has_eat_at) {
        err = set_item(d, "eatAtFoodScale", PyFloat_FromDouble(s->eat_at_food_scale));
    }
    if (!err && s->has_wasted_food) {
        err = set_item(d, "wastedFoodScale", PyFloat_FromDouble(s->wasted_food_scale));
    }
    if (!err && s->has_wasted_brew) {
        err = set_item(d, "wastedBrewScale", PyFloat_FromDouble(s->wasted_brew_scale));
    }
    if (err) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *FightBatch_signals(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int p;
    if (fight_args(self, args, &i, &p) == NULL) {
        return NULL;
    }
    const nh_reward_state *rs = &self->rewards[i];
    if (!rs->has_signals[p]) {
        Py_RETURN_NONE;
    }
    return signals_dict(&rs->signals[p]);
}

static PyObject *FightBatch_last_rewards(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    if (fight_args(self, args, &i, NULL) == NULL) {
        return NULL;
    }
    return Py_BuildValue("(dd)", self->rewards[i].rewards[0], self->rewards[i].rewards[1]);
}

static PyObject *FightBatch_reward_components(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int p;
    if (fight_args(self, args, &i, &p) == NULL) {
        return NULL;
    }
    PyObject *t = PyTuple_New(NH_NUM_REWARD_COMPONENTS);
    for (int k = 0; t != NULL && k < NH_NUM_REWARD_COMPONENTS; k++) {
        PyTuple_SET_ITEM(t, k, PyFloat_FromDouble(self->rewards[i].parts[p][k]));
    }
    return t;
}

/* brief(i): (tick, done, build, fight_mode, hp 0, hp 1, is_baseline 0, is_baseline 1): what an engine's
 * per-step info needs, without building the full player dicts. */
static PyObject *FightBatch_brief(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    const nh_fight *f = fight_args(self, args, &i, NULL);
    if (f == NULL) {
        return NULL;
    }
    return Py_BuildValue("(iNiiiiNN)", f->tick, PyBool_FromLong(f->done), f->build, f->fight_mode,
                         f->players[0].level[NH_SKILL_HITPOINTS], f->players[1].level[NH_SKILL_HITPOINTS],
                         PyBool_FromLong(f->players[0].is_baseline), PyBool_FromLong(f->players[1].is_baseline));
}

static PyObject *FightBatch_hitsplats(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int p;
    const nh_fight *f = fight_args(self, args, &i, &p);
    if (f == NULL) {
        return NULL;
    }
    const nh_player *pl = &f->players[p];
    PyObject *out = PyTuple_New(pl->n_hitsplats);
    if (out == NULL) {
        return NULL;
    }
    for (int k = 0; k < pl->n_hitsplats; k++) {
        PyTuple_SET_ITEM(out, k, PyLong_FromLong(pl->hitsplats[k]));
    }
    return out;
}

static PyMethodDef FightBatch_methods[] = {
    {"hitsplats", (PyCFunction)FightBatch_hitsplats, METH_VARARGS,
     "hitsplats(i, p): the hitsplats player p of fight i was shown this tick, as a tuple (cheaper than player())."},
    {"reset", (PyCFunction)FightBatch_reset, METH_VARARGS,
     "reset(i, rng_state, params): FightSim.reset of fight i (params as for Rng.reset_draws)."},
    {"rng_state", (PyCFunction)FightBatch_rng_state, METH_VARARGS, "rng_state(i): fight i's generator state."},
    {"player", (PyCFunction)FightBatch_player, METH_VARARGS, "player(i, p): PlayerState p of fight i as a dict."},
    {"fight", (PyCFunction)FightBatch_fight, METH_VARARGS, "fight(i): tick, done, fight mode and build of fight i."},
    {"set_player", (PyCFunction)FightBatch_set_player, METH_VARARGS,
     "set_player(i, p, snapshot): load player p of fight i from a .player() snapshot (loadout kept)."},
    {"set_rng_state", (PyCFunction)FightBatch_set_rng_state, METH_VARARGS, "set_rng_state(i, state)."},
    {"create_hits", (PyCFunction)FightBatch_create_hits, METH_VARARGS,
     "create_hits(i, attacker, distance): combat.create_hits with fight i's generator, as a dict."},
    {"movement", (PyCFunction)FightBatch_movement, METH_VARARGS,
     "movement(i, p, op, a=0, b=0, c=0): one movement.py function on player p of fight i."},
    {"operation", (PyCFunction)FightBatch_operation, METH_VARARGS,
     "operation(i, p, op, a=0, b=0): one operations.py function on player p of fight i."},
    {"masks", (PyCFunction)FightBatch_masks, METH_VARARGS, "masks(i, p): the 45 mask booleans of player p."},
    {"observation", (PyCFunction)FightBatch_observation, METH_VARARGS,
     "observation(i, p): the 176 observation entries of player p (float32 values)."},
    {"step", (PyCFunction)FightBatch_step, METH_VARARGS,
     "step(i, actions=None): one tick of fight i; actions = (a0, a1), each 12 ints or None."},
    {"step_batch", (PyCFunction)(void (*)(void))FightBatch_step_batch, METH_VARARGS | METH_KEYWORDS,
     "step_batch(actions, has_action, results, masks=None, obs=None, rewards=None, components=None, only=-1): one "
     "tick of every running fight, or of fight `only` alone when only >= 0 (the others' rows are left as they are)."},
    {"set_reward_weights", (PyCFunction)FightBatch_set_reward_weights, METH_O,
     "set_reward_weights(mapping): every RewardWeights field by name (schedules as (a, b, n)); keeps progress."},
    {"signals", (PyCFunction)FightBatch_signals, METH_VARARGS,
     "signals(i, p): rewards.signals_for dict of player p's last step, None for a baseline or before a step."},
    {"brief", (PyCFunction)FightBatch_brief, METH_VARARGS,
     "brief(i): (tick, done, build, fight_mode, hp0, hp1, is_baseline0, is_baseline1) of fight i."},
    {"last_rewards", (PyCFunction)FightBatch_last_rewards, METH_VARARGS, "last_rewards(i): (reward 0, reward 1)."},
    {"reward_components", (PyCFunction)FightBatch_reward_components, METH_VARARGS,
     "reward_components(i, p): the last step's reward components of player p (a tuple in REWARD_COMPONENTS order)."},
    {"write_masks", (PyCFunction)FightBatch_write_masks, METH_VARARGS,
     "write_masks(masks, obs=None, fight=-1): both players' masks (and observations) of every fight, or of one fight "
     "when fight >= 0 (after resets)."},
    {"activate_prayer", (PyCFunction)FightBatch_activate_prayer, METH_VARARGS,
     "activate_prayer(i, p, prayer): FightSim.activate_prayer (starts the drain task)."},
    {"drain_special", (PyCFunction)FightBatch_drain_special, METH_VARARGS,
     "drain_special(i, p, amount): FightSim.drain_special (starts regeneration)."},
    {"events", (PyCFunction)FightBatch_events, METH_VARARGS, "events(i, p): TickEvents of player p as a dict."},
    {"stats", (PyCFunction)FightBatch_stats, METH_VARARGS, "stats(i, p): EpisodeStats of player p as a dict."},
    {"tasks", (PyCFunction)FightBatch_tasks, METH_VARARGS, "tasks(i): (kind, next_tick, period) per task."},
    {"combat_numbers", (PyCFunction)FightBatch_combat_numbers, METH_VARARGS,
     "combat_numbers(i, attacker, method): attack/defence rolls, damage range, range, speed."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FightBatch_getset[] = {
    {"n_fights", (getter)FightBatch_len, NULL, "Number of fights.", NULL},
    {"progress", (getter)FightBatch_get_progress, (setter)FightBatch_set_progress,
     "Training progress for the reward schedules (§17.4); needs reward weights.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FightBatchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "envs.nh.core._nhcore.FightBatch",
    .tp_doc = PyDoc_STR("A batch of NH fights in one flat array, allocated once; FightBatch(n_fights)."),
    .tp_basicsize = sizeof(FightBatchObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FightBatch_init,
    .tp_dealloc = (destructor)FightBatch_dealloc,
    .tp_methods = FightBatch_methods,
    .tp_getset = FightBatch_getset,
};

/* ---- formulas ------------------------------------------------------------------------------------------- */

typedef void (*formula_fn)(const int64_t *in, int64_t *out_int, double *out_real);

typedef struct {
    const char *name;
    int n_in;
    int n_out;
    int real; /* 1: one float64 result (out_real), 0: n_out int64 results (out_int) */
    formula_fn fn;
} formula_entry;

#define WRAP1(f) static void w_##f(const int64_t *a, int64_t *o, double *r) { (void)r, o[0] = nh_##f(a[0]); }
#define WRAP2(f) static void w_##f(const int64_t *a, int64_t *o, double *r) { (void)r, o[0] = nh_##f(a[0], a[1]); }
#define WRAP3(f) \
    static void w_##f(const int64_t *a, int64_t *o, double *r) { (void)r, o[0] = nh_##f(a[0], a[1], a[2]); }
#define WRAPB(f) \
    static void w_##f(const int64_t *a, int64_t *o, double *r) { (void)r, o[0] = nh_##f(a[0], (int)a[1]); }
#define WRAPOUT1(f) static void w_##f(const int64_t *a, int64_t *o, double *r) { (void)r, nh_##f(a[0], o); }
#define WRAPOUT2(f) static void w_##f(const int64_t *a, int64_t *o, double *r) { (void)r, nh_##f(a[0], a[1], o); }

WRAP2(prayer_multiplied)
WRAP3(effective_level)
WRAP2(magic_effective_level)
WRAP2(roll)
WRAP3(magic_defence_level)
static void w_hit_chance(const int64_t *a, int64_t *o, double *r) { (void)o, r[0] = nh_hit_chance(a[0], a[1]); }
WRAP1(vesta_defence_roll)
WRAP2(base_max_hit)
WRAP2(magic_max_hit)
WRAP1(armadyl_godsword_max_hit)
WRAP1(ancient_godsword_max_hit)
WRAP1(dragon_dagger_max_hit)
WRAP1(ballista_special_max_hit)
WRAP1(dark_bow_special_max_hit)
WRAP1(nightmare_staff_spell_max)
WRAPOUT1(vesta_damage_range)
WRAPOUT1(statius_damage_range)
WRAP1(accurate_zero_to_one)
WRAP1(protected_damage)
WRAP3(dharok_damage)
WRAP1(dark_bow_special_clamp)
WRAPB(opal_bolt_bonus)
WRAPB(dragonstone_bolt_bonus)
WRAPB(diamond_bolt_max_hit)
WRAPOUT2(claw_total_range)
WRAPOUT2(claw_hitsplats)
static void w_blood_heal(const int64_t *a, int64_t *o, double *r) { (void)r, o[0] = nh_blood_heal(a[0], a[1], (int)a[2]); }
WRAP1(statius_drained_defence)
WRAP1(crossbow_hit_delay)
WRAP1(ballista_hit_delay)
WRAP1(dark_bow_second_arrow_delay)
WRAP1(thrown_hit_delay)
WRAP1(magic_hit_delay)

/* The Python name (envs/nh/formulas.py, prayers.py) of each ported formula, its arity and outputs. */
static const formula_entry FORMULAS[] = {
    {"prayer_multiplied", 2, 1, 0, w_prayer_multiplied},
    {"effective_level", 3, 1, 0, w_effective_level},
    {"magic_effective_level", 2, 1, 0, w_magic_effective_level},
    {"roll", 2, 1, 0, w_roll},
    {"magic_defence_level", 3, 1, 0, w_magic_defence_level},
    {"hit_chance", 2, 1, 1, w_hit_chance},
    {"vesta_defence_roll", 1, 1, 0, w_vesta_defence_roll},
    {"base_max_hit", 2, 1, 0, w_base_max_hit},
    {"magic_max_hit", 2, 1, 0, w_magic_max_hit},
    {"armadyl_godsword_max_hit", 1, 1, 0, w_armadyl_godsword_max_hit},
    {"ancient_godsword_max_hit", 1, 1, 0, w_ancient_godsword_max_hit},
    {"dragon_dagger_max_hit", 1, 1, 0, w_dragon_dagger_max_hit},
    {"ballista_special_max_hit", 1, 1, 0, w_ballista_special_max_hit},
    {"dark_bow_special_max_hit", 1, 1, 0, w_dark_bow_special_max_hit},
    {"nightmare_staff_spell_max", 1, 1, 0, w_nightmare_staff_spell_max},
    {"vesta_damage_range", 1, 2, 0, w_vesta_damage_range},
    {"statius_damage_range", 1, 2, 0, w_statius_damage_range},
    {"accurate_zero_to_one", 1, 1, 0, w_accurate_zero_to_one},
    {"protected_damage", 1, 1, 0, w_protected_damage},
    {"dharok_damage", 3, 1, 0, w_dharok_damage},
    {"dark_bow_special_clamp", 1, 1, 0, w_dark_bow_special_clamp},
    {"opal_bolt_bonus", 2, 1, 0, w_opal_bolt_bonus},
    {"dragonstone_bolt_bonus", 2, 1, 0, w_dragonstone_bolt_bonus},
    {"diamond_bolt_max_hit", 2, 1, 0, w_diamond_bolt_max_hit},
    {"claw_total_range", 2, 2, 0, w_claw_total_range},
    {"claw_hitsplats", 2, 4, 0, w_claw_hitsplats},
    {"blood_heal", 3, 1, 0, w_blood_heal},
    {"statius_drained_defence", 1, 1, 0, w_statius_drained_defence},
    {"crossbow_hit_delay", 1, 1, 0, w_crossbow_hit_delay},
    {"ballista_hit_delay", 1, 1, 0, w_ballista_hit_delay},
    {"dark_bow_second_arrow_delay", 1, 1, 0, w_dark_bow_second_arrow_delay},
    {"thrown_hit_delay", 1, 1, 0, w_thrown_hit_delay},
    {"magic_hit_delay", 1, 1, 0, w_magic_hit_delay},
};
#define N_FORMULAS ((Py_ssize_t)(sizeof(FORMULAS) / sizeof(FORMULAS[0])))

static PyObject *formula_names(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    PyObject *result = PyDict_New();
    for (Py_ssize_t i = 0; result && i < N_FORMULAS; i++) {
        const formula_entry *e = &FORMULAS[i];
        PyObject *info = Py_BuildValue("(iis)", e->n_in, e->n_out, e->real ? "float64" : "int64");
        if (info == NULL || PyDict_SetItemString(result, e->name, info) != 0) {
            Py_XDECREF(info);
            Py_CLEAR(result);
            break;
        }
        Py_DECREF(info);
    }
    return result;
}

/* eval_formula(name, args, out): args int64 (n, n_in); out int64 (n, n_out), or float64 (n,) when real. */
static PyObject *eval_formula(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    PyObject *args_obj, *out_obj;
    if (!PyArg_ParseTuple(args, "sOO", &name, &args_obj, &out_obj)) {
        return NULL;
    }
    const formula_entry *e = NULL;
    for (Py_ssize_t i = 0; i < N_FORMULAS; i++) {
        if (strcmp(FORMULAS[i].name, name) == 0) {
            e = &FORMULAS[i];
        }
    }
    if (e == NULL) {
        return PyErr_Format(PyExc_KeyError, "no ported formula named '%s' (see formula_names())", name);
    }
    Py_buffer in, out;
    if (get_buffer(args_obj, &in, 'i', 0, -1, "args")) {
        return NULL;
    }
    Py_ssize_t n = in.len / 8 / e->n_in;
    if (in.len / 8 != n * e->n_in) {
        PyBuffer_Release(&in);
        return PyErr_Format(PyExc_ValueError, "args must have shape (n, %d) for %s", e->n_in, name);
    }
    if (get_buffer(out_obj, &out, e->real ? 'f' : 'i', 1, n * e->n_out, "out")) {
        PyBuffer_Release(&in);
        return NULL;
    }
    const int64_t *a = (const int64_t *)in.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t *oi = e->real ? NULL : (int64_t *)out.buf + i * e->n_out;
        double *of = e->real ? (double *)out.buf + i : NULL;
        e->fn(a + i * e->n_in, oi, of);
    }
    PyBuffer_Release(&in);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

/* movement_candidates(px, py, tx, ty, kind, extent): kind 0 CARDINALS, 1 DIAGONALS, 2 ring_offsets(extent). */
static PyObject *movement_candidates(PyObject *self, PyObject *args) {
    (void)self;
    int px, py, tx, ty, kind, extent;
    if (!PyArg_ParseTuple(args, "iiiiii", &px, &py, &tx, &ty, &kind, &extent)) {
        return NULL;
    }
    int64_t ring[8 * 64][2];
    const int64_t(*offsets)[2];
    int32_t n_offsets;
    if (kind == 0) {
        offsets = NH_CARDINALS, n_offsets = NH_CARDINALS_LEN;
    } else if (kind == 1) {
        offsets = NH_DIAGONALS, n_offsets = NH_DIAGONALS_LEN;
    } else if (kind == 2 && extent >= 1 && extent <= 64) {
        n_offsets = nh_ring_offsets(extent, ring, 8 * 64);
        offsets = (const int64_t(*)[2])ring;
    } else {
        return PyErr_Format(PyExc_ValueError, "kind must be 0 (cardinals), 1 (diagonals) or 2 (ring, extent 1..64)");
    }
    int32_t out[NH_MAX_CANDIDATES][2];
    int32_t n = nh_movement_candidates(px, py, tx, ty, offsets, n_offsets, out);
    if (n < 0) {
        return PyErr_Format(PyExc_RuntimeError, "more than %d tied candidates", NH_MAX_CANDIDATES);
    }
    PyObject *list = PyList_New(n);
    for (int32_t k = 0; list && k < n; k++) {
        PyObject *tile = Py_BuildValue("(ii)", out[k][0], out[k][1]);
        if (tile == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, tile);
    }
    return list;
}

/* ---- module --------------------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    {"formula_names", formula_names, METH_NOARGS, "{name: (n_args, n_outputs, dtype)} of the ported §6 formulas."},
    {"eval_formula", eval_formula, METH_VARARGS, "eval_formula(name, args, out): one formula over rows of args."},
    {"make_loadout", make_loadout, METH_VARARGS, "make_loadout(build, rng=None): loadouts.make_loadout as a dict."},
    {"movement_candidates", movement_candidates, METH_VARARGS,
     "movement_candidates(px, py, tx, ty, kind, extent): kind 0 cardinals, 1 diagonals, 2 ring(extent)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef nhcore_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "envs.nh.core._nhcore",
    .m_doc = "The compiled NH simulator core (C); see docs/compiled-core.md.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__nhcore(void) {
    nh_data_init();
    if (PyType_Ready(&RngType) < 0 || PyType_Ready(&FightBatchType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&nhcore_module);
    if (m == NULL) {
        return NULL;
    }
    PyObject *fields = PyTuple_New(AF_COUNT);
    for (Py_ssize_t i = 0; fields && i < AF_COUNT; i++) {
        PyTuple_SET_ITEM(fields, i, PyUnicode_FromString(ATTACK_FIELD_NAMES[i]));
    }
    if (fields == NULL || PyModule_AddObject(m, "ATTACK_FIELDS", fields) < 0) {
        Py_XDECREF(fields);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&RngType);
    if (PyModule_AddObject(m, "Rng", (PyObject *)&RngType) < 0) {
        Py_DECREF(&RngType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&FightBatchType);
    PyObject *components = PyTuple_New(NH_NUM_REWARD_COMPONENTS);
    for (int k = 0; components != NULL && k < NH_NUM_REWARD_COMPONENTS; k++) {
        PyTuple_SET_ITEM(components, k, PyUnicode_FromString(REWARD_COMPONENT_NAMES[k]));
    }
    if (components == NULL || PyModule_AddObject(m, "REWARD_COMPONENTS", components) < 0) {
        Py_XDECREF(components);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddObject(m, "FightBatch", (PyObject *)&FightBatchType) < 0) {
        Py_DECREF(&FightBatchType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
