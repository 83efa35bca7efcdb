/*
 * nhcore_testing.c: the differential tests' drivers, built only into `envs.nh.core._nhcore_testing`
 * (nhcore_testing.h says why they are apart from the production binding).
 *
 *   Rng(state)                      numpy's PCG64 in C; `state` is `Generator.bit_generator.state`
 *     .state, .random(), .integers(lo, hi)     one draw at a time, exactly as numpy.random.Generator
 *     .draws(ops, out_int, out_float)          many draws in one call
 *     .hits(kinds, attacks, out)    one attack's rolls per row (nh_hits.h); columns named by ATTACK_FIELDS
 *     .reset_draws(params)          FightSim.reset's draws (build, mode, loadouts, spawns, PIDs) -> dict
 *   make_loadout(build, rng=None)   loadouts.make_loadout -> dict (randomised with an Rng)
 *   formula_names(), eval_formula(name, args, out)   the §6 formulas over rows of int64 arguments
 *   movement_candidates(px, py, tx, ty, kind, extent)   movement.movement_candidates over §5.8 offsets
 *   FightBatch.set_player(i, p, snapshot)    load a player snapshot (the inverse of .player, by NH_PLAYER_FIELDS)
 *   FightBatch.create_hits / combat_numbers / movement / operation / activate_prayer / drain_special
 *                                   one combat.py, movement.py, operations.py or FightSim function
 *   FightBatch.step(i, actions=None), .stats, .tasks, .masks, .observation, .last_rewards, .reward_components
 *                                   one fight's tick and state, one object at a time
 */
#include "nhcore_testing.h"

#include <string.h>

#include "nh_combat.h"
#include "nh_formulas.h"
#include "nh_hits.h"
#include "nh_loadout.h"
#include "nh_masks.h"
#include "nh_movement.h"
#include "nh_observation.h"
#include "nh_operations.h"
#include "nh_rng.h"
#include "nh_tables.h"

#define INT64_ARRAY(obj, view, writable, items, what) nhb_buffer(obj, view, "lq", 8, writable, items, what, "int64")
#define FLOAT64_IN(obj, view, writable, items, what) nhb_buffer(obj, view, "d", 8, writable, items, what, "float64")

/* ---- loading a snapshot (the inverse of nhb_to_dict) -------------------------------------------------------- */

int nhb_seq_ints(PyObject *v, const char *key, const char *what, int32_t *out, Py_ssize_t n, Py_ssize_t cap,
                 int32_t *count) {
    PyObject *seq = PySequence_Fast(v, "not a sequence");
    if (seq == NULL) {
        PyErr_Format(PyExc_TypeError, "%s '%s' must be a sequence of ints", what, key);
        return -1;
    }
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if ((n >= 0 && len != n) || (n < 0 && len > cap)) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s '%s' has %zd items (%s %zd)", what, key, len, n >= 0 ? "expected" : "at most",
                     n >= 0 ? n : cap);
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

/* A list of at most `cap` items, or an error naming the key. */
static PyObject *short_list(PyObject *v, const nh_field *f, const char *what) {
    if (!PyList_Check(v) || PyList_GET_SIZE(v) > f->length) {
        PyErr_Format(PyExc_ValueError, "%s '%s' must be a list of at most %d items", what, f->name, f->length);
        return NULL;
    }
    return v;
}

static int field_from(PyObject *v, char *base, const nh_field *f, const char *what) {
    int32_t *out = (int32_t *)(base + f->offset), *count = (int32_t *)(base + f->count);
    switch (f->kind) {
    case NH_FK_INT:
    case NH_FK_BOOL: /* bools are ints */
    case NH_FK_OPT_INT: {
        long x = f->kind == NH_FK_OPT_INT && v == Py_None ? f->none : PyLong_AsLong(v);
        *out = (int32_t)x;
        return x == -1 && PyErr_Occurred() ? -1 : 0;
    }
    case NH_FK_DOUBLE:
        *(double *)(base + f->offset) = PyFloat_AsDouble(v);
        return PyErr_Occurred() ? -1 : 0;
    case NH_FK_INTS:
    case NH_FK_INT_TUPLE:
        return nhb_seq_ints(v, f->name, what, out, f->length, 0, NULL);
    case NH_FK_INT_LIST:
        return nhb_seq_ints(v, f->name, what, out, -1, f->length, count);
    case NH_FK_STRUCTS:
        if (short_list(v, f, what) == NULL) {
            return -1;
        }
        *count = (int32_t)PyList_GET_SIZE(v);
        for (int32_t k = 0; k < *count; k++) {
            char *row = base + f->offset + (size_t)k * f->size;
            if (nhb_from_dict(PyList_GET_ITEM(v, k), row, f->table, f->n_table, 1, what)) {
                return -1;
            }
        }
        return 0;
    case NH_FK_PRAYERS: {
        int32_t ids[NH_NUM_PRAYERS], n;
        if (nhb_seq_ints(v, f->name, what, ids, -1, NH_NUM_PRAYERS, &n)) {
            return -1;
        }
        uint32_t mask = 0;
        for (int32_t k = 0; k < n; k++) {
            if (ids[k] < 0 || ids[k] >= NH_NUM_PRAYERS) {
                PyErr_Format(PyExc_ValueError, "%s: no prayer %d", what, ids[k]);
                return -1;
            }
            mask |= 1u << ids[k];
        }
        *(uint32_t *)out = mask;
        return 0;
    }
    case NH_FK_STYLE: {
        int32_t style[4];
        if (nhb_seq_ints(v, f->name, what, style, 4, 0, NULL)) {
            return -1;
        }
        if (style[0] < 0 || style[0] >= NH_NUM_WEAPON_CLASSES || style[1] < 0 ||
            style[1] >= NH_WEAPON_CLASS_TABLE[style[0]].n_styles) {
            PyErr_Format(PyExc_ValueError, "%s '%s' names no style of its weapon class", what, f->name);
            return -1;
        }
        *out = style[0];
        *count = style[1];
        return 0;
    }
    case NH_FK_WALK_QUEUE:
        if (short_list(v, f, what) == NULL) {
            return -1;
        }
        *(int32_t *)(base + f->aux) = 0;
        *count = (int32_t)PyList_GET_SIZE(v);
        for (int32_t k = 0; k < *count; k++) {
            if (nhb_seq_ints(PyList_GET_ITEM(v, k), f->name, what, out + 2 * k, 2, 0, NULL)) {
                return -1;
            }
        }
        return 0;
    default:
        PyErr_Format(PyExc_TypeError, "%s: '%s' cannot be loaded", what, f->name);
        return -1;
    }
}

int nhb_from_dict(PyObject *dict, void *base, const nh_field *fields, int32_t n, int skip_structs, const char *what) {
    if (!PyDict_Check(dict)) {
        PyErr_Format(PyExc_TypeError, "a %s is a dict (the form of the snapshot it loads)", what);
        return -1;
    }
    for (int32_t k = 0; k < n; k++) {
        const nh_field *f = &fields[k];
        if (skip_structs && f->kind == NH_FK_STRUCT) {
            continue;
        }
        PyObject *v = nhb_dict_item(dict, f->name, what);
        if (v == NULL || field_from(v, (char *)base, f, what)) {
            return -1;
        }
    }
    return 0;
}

/* set_player(i, p, snapshot): everything but the loadout (kept from the reset), parsed into a copy first so
 * that bad input leaves the player as it was. */
PyObject *nht_set_player(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    PyObject *snap;
    if (!PyArg_ParseTuple(args, "niO", &i, &which, &snap)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_player_at(self, i, which);
    if (fight == NULL) {
        return NULL;
    }
    nh_player loaded = fight->players[which];
    if (nhb_from_dict(snap, &loaded, NH_PLAYER_FIELDS, NH_NUM_PLAYER_FIELDS, 1, "player snapshot")) {
        return NULL;
    }
    fight->players[which] = loaded;
    Py_RETURN_NONE;
}

/* ---- Rng ------------------------------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD nh_rng rng;
} RngObject;

static PyTypeObject RngType; /* defined below, after its methods */

static int Rng_init(RngObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"state", NULL};
    PyObject *state;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O", kwlist, &state)) {
        return -1;
    }
    return nhb_rng_from_state(state, &self->rng);
}

static PyObject *Rng_get_state(RngObject *self, void *closure) {
    (void)closure;
    return nhb_rng_state_dict(&self->rng);
}

static int Rng_set_state_attr(RngObject *self, PyObject *value, void *closure) {
    (void)closure;
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "state cannot be deleted");
        return -1;
    }
    return nhb_rng_from_state(value, &self->rng);
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
    if (INT64_ARRAY(ops_obj, &ops, 0, -1, "ops")) {
        return NULL;
    }
    Py_ssize_t n = ops.len / 8 / 3;
    if (ops.len / 8 != n * 3) {
        PyBuffer_Release(&ops);
        return PyErr_Format(PyExc_ValueError, "ops must have shape (n, 3)");
    }
    if (INT64_ARRAY(int_obj, &out_i, 1, n, "out_int")) {
        PyBuffer_Release(&ops);
        return NULL;
    }
    if (FLOAT64_IN(float_obj, &out_f, 1, n, "out_float")) {
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
    if (INT64_ARRAY(kinds_obj, &kinds, 0, -1, "kinds")) {
        return NULL;
    }
    Py_ssize_t n = kinds.len / 8;
    if (FLOAT64_IN(attacks_obj, &attacks, 0, n * AF_COUNT, "attacks")) {
        PyBuffer_Release(&kinds);
        return NULL;
    }
    if (INT64_ARRAY(out_obj, &out, 1, n * HIT_OUT_COLUMNS, "out")) {
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

/* make_loadout(build, rng=None): build is the Build's index (list(Build)). */
static PyObject *make_loadout(PyObject *self, PyObject *args) {
    (void)self;
    int build;
    PyObject *rng_obj = Py_None;
    if (!PyArg_ParseTuple(args, "i|O", &build, &rng_obj)) {
        return NULL;
    }
    if (rng_obj != Py_None && !PyObject_TypeCheck(rng_obj, &RngType)) {
        return PyErr_Format(PyExc_TypeError, "rng must be an envs.nh.core._nhcore_testing.Rng or None");
    }
    nh_loadout lo;
    int err = nh_make_loadout(build, rng_obj == Py_None ? NULL : &((RngObject *)rng_obj)->rng, &lo);
    return err ? nhb_loadout_error(err) : nhb_to_dict(&lo, NH_LOADOUT_FIELDS, NH_NUM_LOADOUT_FIELDS);
}

/* reset_draws(params): params is reset_params()'s dict (build_options a list of Build indices, build_weights a
 * list of floats or None, fight_type -1 for the build's own). */
static PyObject *Rng_reset_draws(RngObject *self, PyObject *args) {
    PyObject *dict;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &dict)) {
        return NULL;
    }
    nh_reset_params prm;
    if (nhb_reset_params_from_dict(dict, &prm)) {
        return NULL;
    }
    nh_reset_result res;
    int err = nh_reset_draws(&self->rng, &prm, &res);
    if (err) {
        return nhb_loadout_error(err);
    }
    return Py_BuildValue("{s:i,s:i,s:[N,N],s:[i,i],s:[i,i],s:[d,d],s:[i,i]}", "build", res.build, "fight_mode",
                         res.fight_mode, "loadouts", nhb_to_dict(&res.loadouts[0], NH_LOADOUT_FIELDS, NH_NUM_LOADOUT_FIELDS),
                         nhb_to_dict(&res.loadouts[1], NH_LOADOUT_FIELDS, NH_NUM_LOADOUT_FIELDS), "x", res.x[0], res.x[1], "y", res.y[0], res.y[1], "pid",
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
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "envs.nh.core._nhcore_testing.Rng",
    .tp_doc = PyDoc_STR("numpy's PCG64 Generator draws in C, bit for bit; Rng(Generator.bit_generator.state)."),
    .tp_basicsize = sizeof(RngObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Rng_init,
    .tp_methods = Rng_methods,
    .tp_getset = Rng_getset,
};

static PyObject *combat_error(int err) {
    if (err == NH_ERR_NO_SPELL) {
        return PyErr_Format(PyExc_ValueError, "MAGIC_SPELL needs a selected spell");
    }
    return PyErr_Format(PyExc_RuntimeError, "an attack made more than %d hits", NH_MAX_ATTACK_HITS);
}

/* create_hits(i, attacker, distance): combat.create_hits(fight rng, players[attacker], the other, distance). */
PyObject *nht_create_hits(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int attacker, distance;
    if (!PyArg_ParseTuple(args, "nii", &i, &attacker, &distance)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_at(self, i);
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
    PyObject *hits = PyList_New(out.n_hits);
    for (int32_t k = 0; hits != NULL && k < out.n_hits; k++) {
        PyObject *hit = nhb_to_dict(&out.hits[k], NH_PENDING_HIT_FIELDS, NH_NUM_PENDING_HIT_FIELDS);
        if (hit == NULL) {
            Py_CLEAR(hits);
            break;
        }
        PyList_SET_ITEM(hits, k, hit);
    }
    if (hits == NULL) {
        return NULL;
    }
    return Py_BuildValue("{s:i,s:N,s:i,s:i,s:i,s:i,s:N}", "method", out.method, "hits", hits,
                         "energy_cost", out.energy_cost, "attack_speed", out.attack_speed, "freeze_ticks",
                         out.freeze_ticks, "heal", out.heal, "spell",
                         out.spell == NH_NO_SPELL ? Py_NewRef(Py_None) : PyLong_FromLong(out.spell));
}

/* combat_numbers(i, attacker, method): the pure functions of combat.py for one method. */
PyObject *nht_combat_numbers(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int attacker, method;
    if (!PyArg_ParseTuple(args, "nii", &i, &attacker, &method)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_at(self, i);
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
PyObject *nht_movement(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which, a = 0, b = 0, c = 0;
    const char *op;
    if (!PyArg_ParseTuple(args, "nis|iii", &i, &which, &op, &a, &b, &c)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_player_at(self, i, which);
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

/* A slot or an item id, None where the core says none (a negative slot, NH_EMPTY). */
static PyObject *int_or_none(int32_t value, int32_t none) {
    return value == none || value < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(value);
}

/* operation(i, p, op, a=0, b=0): activate_prayer(a) -> bool; deactivate_all_prayers; heal(a, cap=b) -> int;
 * effect_heal(a) -> int; eat_food(a) -> bool; eat_karambwan -> bool; drink_potion(a, fewest_first=b) -> bool;
 * find_potion(a, fewest_first=b) -> slot or None; cast_vengeance -> bool; primary_food -> id or None;
 * has_any_food -> bool; nominal_heal(a) -> int (the player's base hitpoints); can_activate(a) -> bool. */
PyObject *nht_operation(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which, a = 0, b = 0;
    const char *op;
    if (!PyArg_ParseTuple(args, "nis|ii", &i, &which, &op, &a, &b)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_player_at(self, i, which);
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
        return int_or_none(nh_find_potion(p, a, b), -1);
    }
    if (strcmp(op, "cast_vengeance") == 0) {
        return PyBool_FromLong(nh_cast_vengeance(p));
    }
    if (strcmp(op, "primary_food") == 0) {
        return int_or_none(nh_primary_food(p), NH_EMPTY);
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
    if (o == NH_OUTCOME_NONE) {
        Py_RETURN_NONE;
    }
    return PyUnicode_FromString(NH_OUTCOME_NAMES[o - 1]);
}

/* step(i, actions=None): one tick of fight i; actions is a pair of 12-int sequences or None entries. */
PyObject *nht_step(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    PyObject *actions_obj = Py_None;
    if (!PyArg_ParseTuple(args, "n|O", &i, &actions_obj)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_at(self, i);
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
            if (nhb_seq_ints(one, "action", "step", actions[k], 12, 0, NULL)) {
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
        return nhb_sim_error(err);
    }
    if (self->weights != NULL) {
        nh_step_rewards(fight, self->weights, result.outcomes, &self->rewards[i]);
    }
    return Py_BuildValue("{s:i,s:(NN),s:O}", "tick", result.tick, "outcomes", outcome_name(result.outcomes[0]),
                         outcome_name(result.outcomes[1]), "truncated", result.truncated ? Py_True : Py_False);
}

/* stats(i, p): EpisodeStats of player p. */
PyObject *nht_stats(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = nhb_fight_args(self, args, &i, &which);
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
                        st->has_gear_sample[k] ? nhb_int_list(st->gear_samples[k], NH_NUM_BONUSES) : Py_NewRef(Py_None));
    }
    if (recent == NULL || prayed == NULL || samples == NULL) {
        Py_XDECREF(recent);
        Py_XDECREF(prayed);
        Py_XDECREF(samples);
        return NULL;
    }
    return Py_BuildValue("{s:i,s:N,s:N,s:i,s:N,s:N,s:N,s:d,s:d,s:d,s:O}", "n_hits", st->n_hits, "style_counts",
                         nhb_int_list(st->style_counts, 3), "defender_prayer_counts", nhb_int_list(st->defender_prayer_counts, 3),
                         "protected_count", st->protected_count, "recent", recent, "recent_prayed", prayed,
                         "gear_samples", samples, "dealt_scale_sum", st->dealt_scale_sum, "received_scale_sum",
                         st->received_scale_sum, "observed_opponent_hp", st->observed_opponent_hp,
                         "known_lunar_opponent", st->known_lunar_opponent ? Py_True : Py_False);
}

/* activate_prayer(i, p, prayer) / drain_special(i, p, amount): FightSim's shared mechanisms (they schedule tasks). */
static PyObject *sim_op(FightBatchObject *self, PyObject *args, int drain) {
    Py_ssize_t i;
    int which, value;
    if (!PyArg_ParseTuple(args, "nii", &i, &which, &value)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_player_at(self, i, which);
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
        return nhb_sim_error(fight->error);
    }
    Py_RETURN_NONE;
}

PyObject *nht_activate_prayer(FightBatchObject *self, PyObject *args) {
    return sim_op(self, args, 0);
}

PyObject *nht_drain_special(FightBatchObject *self, PyObject *args) {
    return sim_op(self, args, 1);
}

/* tasks(i): (kind, next_tick, period) of every scheduled task, in creation order. */
PyObject *nht_tasks(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    nh_fight *fight = nhb_fight_args(self, args, &i, NULL);
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
PyObject *nht_masks(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = nhb_fight_args(self, args, &i, &which);
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
PyObject *nht_observation(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = nhb_fight_args(self, args, &i, &which);
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

PyObject *nht_last_rewards(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    if (nhb_fight_args(self, args, &i, NULL) == NULL) {
        return NULL;
    }
    return Py_BuildValue("(dd)", self->rewards[i].rewards[0], self->rewards[i].rewards[1]);
}

PyObject *nht_reward_components(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int p;
    if (nhb_fight_args(self, args, &i, &p) == NULL) {
        return NULL;
    }
    PyObject *t = PyTuple_New(NH_NUM_REWARD_COMPONENTS);
    for (int k = 0; t != NULL && k < NH_NUM_REWARD_COMPONENTS; k++) {
        PyTuple_SET_ITEM(t, k, PyFloat_FromDouble(self->rewards[i].parts[p][k]));
    }
    return t;
}

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
    if (INT64_ARRAY(args_obj, &in, 0, -1, "args")) {
        return NULL;
    }
    Py_ssize_t n = in.len / 8 / e->n_in;
    if (in.len / 8 != n * e->n_in) {
        PyBuffer_Release(&in);
        return PyErr_Format(PyExc_ValueError, "args must have shape (n, %d) for %s", e->n_in, name);
    }
    if ((e->real ? FLOAT64_IN(out_obj, &out, 1, n * e->n_out, "out") : INT64_ARRAY(out_obj, &out, 1, n * e->n_out, "out"))) {
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

/* ---- module ------------------------------------------------------------------------------------------------- */

static PyMethodDef testing_functions[] = {
    {"formula_names", formula_names, METH_NOARGS, "{name: (n_args, n_outputs, dtype)} of the ported §6 formulas."},
    {"eval_formula", eval_formula, METH_VARARGS, "eval_formula(name, args, out): one formula over rows of args."},
    {"make_loadout", make_loadout, METH_VARARGS, "make_loadout(build, rng=None): loadouts.make_loadout as a dict."},
    {"movement_candidates", movement_candidates, METH_VARARGS,
     "movement_candidates(px, py, tx, ty, kind, extent): kind 0 cardinals, 1 diagonals, 2 ring(extent)."},
    {NULL, NULL, 0, NULL},
};

int nh_testing_init(PyObject *m) {
    if (PyType_Ready(&RngType) < 0 || PyModule_AddFunctions(m, testing_functions) < 0 ||
        PyModule_AddObjectRef(m, "Rng", (PyObject *)&RngType) < 0) {
        return -1;
    }
    PyObject *fields = PyTuple_New(AF_COUNT);
    for (Py_ssize_t i = 0; fields && i < AF_COUNT; i++) {
        PyTuple_SET_ITEM(fields, i, PyUnicode_FromString(ATTACK_FIELD_NAMES[i]));
    }
    return nhb_module_add(m, "ATTACK_FIELDS", fields);
}
