/*
 * nhcore_module.c: the CPython binding of the compiled core, module `envs.nh.core._nhcore`.
 *
 * Thin on purpose: the core (nh_*.h / nh_*.c) knows nothing of Python. Arrays cross the boundary through
 * the buffer protocol only (PyObject_GetBuffer on numpy arrays), so the build needs no numpy headers; the
 * caller allocates every array once and the core writes into it. Snapshots (a player, a tick's events, the
 * signals) are dicts made by one table-driven routine from the generated field tables (nh_fields.h).
 *
 * The production API (docs/compiled-core.md, "The binding"):
 *   FightBatch(n)                   n fights in one flat array (nh_fight, nh_state.h), allocated once
 *     .reset(i, rng_state, params)  FightSim.reset of fight i from a numpy generator state and reset_params()
 *     .step_batch(actions, has_action, results, masks=None, obs=None, rewards=None, components=None, only=-1)
 *                                   one tick of every running fight, GIL released, results into arrays
 *     .write_masks(masks, obs=None, fight=-1)  both players' masks (and observations), after resets
 *     .set_reward_weights(mapping), .progress   RewardWeights by name; the §17.4 training progress
 *     .rng_state(i) / .set_rng_state(i, state)  fight i's generator, as numpy's state dict
 *     .brief(i), .hitsplats(i, p), .fight(i)    what an info dict and the fight tools read each tick
 *     .player(i, p), .events(i, p), .signals(i, p)   PlayerState, TickEvents, signals_for as plain dicts
 *   REWARD_COMPONENTS, FIELDS       rewards.REWARD_COMPONENTS; the generated tables' field names
 *   SOURCE_HASH                     the hash of the C sources this module was built from (setup.py)
 *
 * Compiled with NH_TESTING (setup.py's second extension) it is `envs.nh.core._nhcore_testing`: the same
 * API plus the differential tests' drivers of nhcore_testing.c (nhcore_testing.h).
 */
#include "nhcore_binding.h"

#include <math.h>
#include <string.h>

#include "nh_masks.h"
#include "nh_observation.h"
#include "nh_tables.h"

#ifndef NH_SOURCE_HASH
#error "NH_SOURCE_HASH is unset: build the core through setup.py (pip install -e .), which hashes the sources"
#endif

#ifdef NH_TESTING
#include "nhcore_testing.h"
#define NH_MODULE_NAME "envs.nh.core._nhcore_testing"
#define NH_MODULE_INIT PyInit__nhcore_testing
#else
#define NH_TESTING_FIGHT_METHODS
#define NH_MODULE_NAME "envs.nh.core._nhcore"
#define NH_MODULE_INIT PyInit__nhcore
#endif

/* ---- buffers ----------------------------------------------------------------------------------------- */

int nhb_buffer(PyObject *obj, Py_buffer *view, const char *codes, Py_ssize_t itemsize, int writable, Py_ssize_t items,
               const char *what, const char *dtype) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a C-contiguous%s numpy array", what, writable ? " writable" : "");
        return -1;
    }
    const char *fmt = view->format ? view->format : "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@') {
        fmt++;
    }
    if (view->itemsize != itemsize || fmt[0] == '\0' || fmt[1] != '\0' || strchr(codes, fmt[0]) == NULL) {
        PyErr_Format(PyExc_TypeError, "%s must have dtype %s (got format '%s')", what, dtype,
                     view->format ? view->format : "?");
        PyBuffer_Release(view);
        return -1;
    }
    if (items >= 0 && view->len / itemsize != items) {
        PyErr_Format(PyExc_ValueError, "%s must hold %zd items (got %zd)", what, items, view->len / itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

#define INT32_ARRAY(obj, view, writable, items, what) nhb_buffer(obj, view, "i", 4, writable, items, what, "int32")
#define FLOAT32_ARRAY(obj, view, items, what) nhb_buffer(obj, view, "f", 4, 1, items, what, "float32")
#define FLOAT64_ARRAY(obj, view, items, what) nhb_buffer(obj, view, "d", 8, 1, items, what, "float64")
#define BYTE_ARRAY(obj, view, items, what) nhb_buffer(obj, view, "?B", 1, 1, items, what, "bool or uint8")

/* ---- numpy's generator state ---------------------------------------------------------------------------- */

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

PyObject *nhb_dict_item(PyObject *dict, const char *key, const char *what) {
    PyObject *item = PyDict_Check(dict) ? PyDict_GetItemString(dict, key) : NULL; /* borrowed */
    if (item == NULL) {
        PyErr_Format(PyExc_ValueError, "%s needs the key '%s'", what, key);
    }
    return item;
}

int nhb_rng_from_state(PyObject *state, nh_rng *out) {
    static const char what[] = "a PCG64 state dict (Generator.bit_generator.state)";
    if (!PyDict_Check(state)) {
        PyErr_SetString(PyExc_TypeError, "state must be a dict: pass numpy's Generator.bit_generator.state");
        return -1;
    }
    PyObject *name = nhb_dict_item(state, "bit_generator", what);
    if (name == NULL) {
        return -1;
    }
    if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, "PCG64") != 0) {
        PyErr_SetString(PyExc_ValueError, "state is not a PCG64 state: seed with numpy.random.default_rng");
        return -1;
    }
    PyObject *inner = nhb_dict_item(state, "state", what);
    PyObject *has_uint32 = inner ? nhb_dict_item(state, "has_uint32", what) : NULL;
    PyObject *uinteger = has_uint32 ? nhb_dict_item(state, "uinteger", what) : NULL;
    PyObject *s = uinteger ? nhb_dict_item(inner, "state", what) : NULL;
    PyObject *inc = s ? nhb_dict_item(inner, "inc", what) : NULL;
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

PyObject *nhb_rng_state_dict(const nh_rng *rng) {
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

/* ---- snapshots: a struct as a dict, by its generated field table ----------------------------------------- */

PyObject *nhb_int_list(const int32_t *values, int32_t n) {
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

/* A list of `n` items made by item(base, k), or NULL. */
static PyObject *list_of(const char *base, const nh_field *f, int32_t n,
                         PyObject *(*item)(const char *base, const nh_field *f, int32_t k)) {
    PyObject *list = PyList_New(n);
    for (int32_t k = 0; list && k < n; k++) {
        PyObject *v = item(base, f, k);
        if (v == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, k, v);
    }
    return list;
}

static PyObject *struct_item(const char *base, const nh_field *f, int32_t k) {
    return nhb_to_dict(base + f->offset + (size_t)k * f->size, f->table, f->n_table);
}

static PyObject *tile_item(const char *base, const nh_field *f, int32_t k) {
    int32_t head = *(const int32_t *)(base + f->aux);
    const int32_t *tile = (const int32_t *)(base + f->offset) + 2 * ((head + k) % f->length);
    return Py_BuildValue("(ii)", tile[0], tile[1]);
}

static PyObject *gear_set_item(const char *base, const nh_field *f, int32_t k) {
    const int32_t *ids = (const int32_t *)(base + f->offset) + (size_t)k * NH_NUM_SLOTS;
    return nhb_int_list(ids, ((const int32_t *)(base + f->count))[k]);
}

static PyObject *prayer_list(uint32_t mask) {
    int32_t ids[NH_NUM_PRAYERS], n = 0;
    for (int32_t k = 0; k < NH_NUM_PRAYERS; k++) {
        if (mask >> k & 1u) {
            ids[n++] = k;
        }
    }
    return nhb_int_list(ids, n);
}

static PyObject *field_value(const char *base, const nh_field *f) {
    const int32_t *v = (const int32_t *)(base + f->offset);
    const int32_t count = *(const int32_t *)(base + f->count); /* read by the kinds that have one (offset 0 else) */
    switch (f->kind) {
    case NH_FK_INT:
        return PyLong_FromLong(*v);
    case NH_FK_BOOL:
        return PyBool_FromLong(*v);
    case NH_FK_DOUBLE:
        return PyFloat_FromDouble(*(const double *)(base + f->offset));
    case NH_FK_OPT_INT:
        return *v == f->none ? Py_NewRef(Py_None) : PyLong_FromLong(*v);
    case NH_FK_INTS:
        return nhb_int_list(v, f->length);
    case NH_FK_INT_TUPLE: {
        PyObject *list = nhb_int_list(v, f->length);
        PyObject *tuple = list ? PyList_AsTuple(list) : NULL;
        Py_XDECREF(list);
        return tuple;
    }
    case NH_FK_INT_LIST:
        return nhb_int_list(v, count);
    case NH_FK_STRUCTS:
        return list_of(base, f, count, struct_item);
    case NH_FK_STRUCT:
        return nhb_to_dict(base + f->offset, f->table, f->n_table);
    case NH_FK_PRAYERS:
        return prayer_list(*(const uint32_t *)v);
    case NH_FK_STYLE: { /* (weapon class, style index, stance, style type) */
        const nh_fight_style *fs = &NH_WEAPON_CLASS_TABLE[*v].styles[count];
        return Py_BuildValue("(iiii)", *v, count, fs->stance, fs->style_type);
    }
    case NH_FK_WALK_QUEUE:
        return list_of(base, f, count, tile_item);
    case NH_FK_GEAR_SETS:
        return list_of(base, f, f->length, gear_set_item);
    case NH_FK_STYLE_NAME:
        return PyUnicode_FromString(*v >= 0 && *v < 3 ? NH_STYLE_NAMES[*v] : NH_NULL_STYLE_NAME);
    default:
        return PyErr_Format(PyExc_SystemError, "field %s: no marshalling of kind %d", f->name, f->kind);
    }
}

PyObject *nhb_to_dict(const void *base, const nh_field *fields, int32_t n) {
    PyObject *d = PyDict_New();
    for (int32_t k = 0; d && k < n; k++) {
        const nh_field *f = &fields[k];
        if (f->optional && *(const int32_t *)((const char *)base + f->present) == 0) {
            continue;
        }
        PyObject *v = field_value((const char *)base, f);
        if (v == NULL || PyDict_SetItemString(d, f->name, v) != 0) {
            Py_XDECREF(v);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(v);
    }
    return d;
}

/* Python names of a generated table's fields (the module's FIELDS), so tests can hold the build to mirrors.py. */
static PyObject *field_names(const nh_field *fields, int32_t n) {
    PyObject *names = PyTuple_New(n);
    for (int32_t k = 0; names && k < n; k++) {
        PyObject *name = PyUnicode_FromString(fields[k].name);
        if (name == NULL) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, k, name);
    }
    return names;
}

static PyObject *name_tuple(const char *const *names, int n) {
    PyObject *t = PyTuple_New(n);
    for (int k = 0; t && k < n; k++) {
        PyObject *name = PyUnicode_FromString(names[k]);
        if (name == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, k, name);
    }
    return t;
}

/* ---- reset parameters --------------------------------------------------------------------------------------- */

int nhb_reset_params_from_dict(PyObject *dict, nh_reset_params *prm) {
    memset(prm, 0, sizeof(*prm));
    for (int k = 0; k < NH_NUM_RESET_INT_FIELDS; k++) {
        const nh_field *f = &NH_RESET_INT_FIELDS[k];
        PyObject *v = nhb_dict_item(dict, f->name, "reset params");
        if (v == NULL) {
            PyErr_Format(PyExc_ValueError, "reset params need the key '%s'", f->name);
            return -1;
        }
        long x = PyLong_AsLong(v);
        if (x == -1 && PyErr_Occurred()) {
            return -1;
        }
        *(int32_t *)((char *)prm + f->offset) = (int32_t)x;
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
    return PyErr_Occurred() ? -1 : 0;
}

/* ---- errors ----------------------------------------------------------------------------------------------------- */

PyObject *nhb_loadout_error(int err) {
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

PyObject *nhb_sim_error(int err) {
    if (err == NH_ERR_FIGHT_OVER) {
        return PyErr_Format(PyExc_RuntimeError, "the fight is over: call reset() before stepping again (spec 16.3)");
    }
    return PyErr_Format(PyExc_RuntimeError, "broken bound in the core (error %d): a queue or the task list is full", err);
}

/* ---- FightBatch --------------------------------------------------------------------------------------------- */

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

nh_fight *nhb_fight_at(FightBatchObject *self, Py_ssize_t i) {
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

nh_fight *nhb_fight_player_at(FightBatchObject *self, Py_ssize_t i, int which) {
    if (which != 0 && which != 1) {
        PyErr_Format(PyExc_IndexError, "player must be 0 or 1, got %d", which);
        return NULL;
    }
    return nhb_fight_at(self, i);
}

nh_fight *nhb_fight_args(FightBatchObject *self, PyObject *args, Py_ssize_t *i, int *which) {
    if (which != NULL ? !PyArg_ParseTuple(args, "ni", i, which) : !PyArg_ParseTuple(args, "n", i)) {
        return NULL;
    }
    return which != NULL ? nhb_fight_player_at(self, *i, *which) : nhb_fight_at(self, *i);
}

/* reset(i, rng_state, params): numpy's bit_generator.state and the reset_params() dict. */
static PyObject *FightBatch_reset(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    PyObject *state, *params;
    if (!PyArg_ParseTuple(args, "nOO!", &i, &state, &PyDict_Type, &params)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_at(self, i);
    if (fight == NULL) {
        return NULL;
    }
    nh_rng rng; /* parsed apart first, so that bad input leaves the fight untouched */
    nh_reset_params prm;
    if (nhb_rng_from_state(state, &rng) || nhb_reset_params_from_dict(params, &prm)) {
        return NULL;
    }
    fight->rng = rng;
    fight->params = prm;
    memset(&self->rewards[i], 0, sizeof(nh_reward_state)); /* NHEngine.reset: no previous signals */
    int err = nh_fight_reset(fight);
    return err ? nhb_loadout_error(err) : Py_NewRef(Py_None);
}

static PyObject *FightBatch_rng_state(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    nh_fight *fight = nhb_fight_args(self, args, &i, NULL);
    return fight == NULL ? NULL : nhb_rng_state_dict(&fight->rng);
}

static PyObject *FightBatch_set_rng_state(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    PyObject *state;
    if (!PyArg_ParseTuple(args, "nO", &i, &state)) {
        return NULL;
    }
    nh_fight *fight = nhb_fight_at(self, i);
    if (fight == NULL || nhb_rng_from_state(state, &fight->rng)) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* player(i, p): every field of PlayerState (NH_PLAYER_FIELDS), enums as ints, player references as indices. */
static PyObject *FightBatch_player(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = nhb_fight_args(self, args, &i, &which);
    return fight == NULL ? NULL : nhb_to_dict(&fight->players[which], NH_PLAYER_FIELDS, NH_NUM_PLAYER_FIELDS);
}

/* events(i, p): TickEvents of player p (hit records without the delay, see nh_hit_record). */
static PyObject *FightBatch_events(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int which;
    nh_fight *fight = nhb_fight_args(self, args, &i, &which);
    return fight == NULL ? NULL : nhb_to_dict(&fight->events[which], NH_TICK_EVENTS_FIELDS, NH_NUM_TICK_EVENTS_FIELDS);
}

/* fight(i): the fight-level fields of FightSim. */
static PyObject *FightBatch_fight(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    nh_fight *fight = nhb_fight_args(self, args, &i, NULL);
    if (fight == NULL) {
        return NULL;
    }
    return Py_BuildValue("{s:i,s:N,s:i,s:i}", "tick", fight->tick, "done", PyBool_FromLong(fight->done), "fight_mode",
                         fight->fight_mode, "build", fight->build);
}

/* brief(i): (tick, done, build, fight_mode, hp 0, hp 1, is_baseline 0, is_baseline 1): what an engine's
 * per-step info needs, without building the full player dicts. */
static PyObject *FightBatch_brief(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    const nh_fight *f = nhb_fight_args(self, args, &i, NULL);
    if (f == NULL) {
        return NULL;
    }
    return Py_BuildValue("(iNiiiiNN)", f->tick, PyBool_FromLong(f->done), f->build, f->fight_mode,
                         f->players[0].level[NH_SKILL_HITPOINTS], f->players[1].level[NH_SKILL_HITPOINTS],
                         PyBool_FromLong(f->players[0].is_baseline), PyBool_FromLong(f->players[1].is_baseline));
}

/* hitsplats(i, p): the hitsplats player p was shown this tick, as a tuple (cheaper than player()). */
static PyObject *FightBatch_hitsplats(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int p;
    const nh_fight *f = nhb_fight_args(self, args, &i, &p);
    if (f == NULL) {
        return NULL;
    }
    const nh_player *pl = &f->players[p];
    PyObject *out = PyTuple_New(pl->n_hitsplats);
    for (int k = 0; out != NULL && k < pl->n_hitsplats; k++) {
        PyTuple_SET_ITEM(out, k, PyLong_FromLong(pl->hitsplats[k]));
    }
    return out;
}

/* ---- the batch API ---------------------------------------------------------------------------------------- */

/* Both players' masks (and observations) of fight i into the batch arrays' rows. */
static void write_fight_masks(const nh_fight *fight, Py_ssize_t i, uint8_t *masks, float *obs) {
    for (int p = 0; p < 2; p++) {
        uint8_t *m = masks + (i * 2 + p) * NH_NUM_MASK;
        nh_mask_values(fight, &fight->players[p], fight->stats[p].known_lunar_opponent, m);
        if (obs != NULL) {
            nh_encode_observation(fight, &fight->players[p], m, obs + (i * 2 + p) * NH_OBS_SIZE);
        }
    }
}

/* write_masks(masks, obs=None, fight=-1): both players' masks of every fight (or of one) into a bool/uint8
 * (n, 2, 45) array and observations into a float32 (n, 2, 176) array, after resets. */
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
    Py_buffer masks, obs;
    if (BYTE_ARRAY(masks_obj, &masks, self->n * 2 * NH_NUM_MASK, "masks")) {
        return NULL;
    }
    if (obs_obj != Py_None && FLOAT32_ARRAY(obs_obj, &obs, self->n * 2 * NH_OBS_SIZE, "observations")) {
        PyBuffer_Release(&masks);
        return NULL;
    }
    float *o = obs_obj != Py_None ? (float *)obs.buf : NULL;
    for (Py_ssize_t i = only < 0 ? 0 : only; i < (only < 0 ? self->n : only + 1); i++) {
        write_fight_masks(&self->fights[i], i, (uint8_t *)masks.buf, o);
    }
    PyBuffer_Release(&masks);
    if (o != NULL) {
        PyBuffer_Release(&obs);
    }
    Py_RETURN_NONE;
}

/* The arrays of one step_batch call, acquired together and released together. */
typedef struct {
    Py_buffer views[7];
    int held[7];
} step_arrays;

enum { SA_ACTIONS, SA_HAS, SA_RESULTS, SA_MASKS, SA_OBS, SA_REWARDS, SA_COMPONENTS };

/* Record whether array k was acquired (err == 0); returns err. */
static int hold(step_arrays *a, int k, int err) {
    a->held[k] = err == 0;
    return err;
}

static void release_arrays(step_arrays *a) {
    for (int k = 0; k < 7; k++) {
        if (a->held[k]) {
            PyBuffer_Release(&a->views[k]);
        }
    }
}

/* step_batch(actions, has_action, results, masks=None, obs=None, rewards=None, components=None, only=-1): one
 * tick of every running fight (or of fight `only` alone), in one call, the GIL released. actions int32
 * (n, 2, 12), has_action int32 (n, 2), results int32 (n, 4) written per fight: (tick, outcome of player 0,
 * outcome of player 1, truncated), outcomes 0 none, 1 won, 2 lost, 3 tied; a done fight is skipped (its row
 * untouched). With `masks` (bool/uint8 (n, 2, 45)) and `obs` (float32 (n, 2, 176)) both players' masks and
 * observations of every stepped fight are written after its tick; with reward weights set each stepped
 * fight's rewards (§17) are computed, and `rewards` (float64 (n, 2)) and `components` (float64 (n, 2,
 * len(REWARD_COMPONENTS))) receive them (0 for a baseline player). Returns how many fights stepped; no
 * Python object is made per fight. */
static PyObject *FightBatch_step_batch(FightBatchObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"actions", "has_action", "results", "masks", "obs", "rewards", "components", "only", NULL};
    PyObject *obj[7] = {NULL, NULL, NULL, Py_None, Py_None, Py_None, Py_None};
    Py_ssize_t only = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|OOOOn", kwlist, &obj[0], &obj[1], &obj[2], &obj[3], &obj[4],
                                     &obj[5], &obj[6], &only)) {
        return NULL;
    }
    if (self->fights == NULL) {
        return PyErr_Format(PyExc_RuntimeError, "FightBatch is not initialised");
    }
    if (only >= self->n) {
        return PyErr_Format(PyExc_IndexError, "fight %zd out of range (batch of %zd)", only, self->n);
    }
    if ((obj[SA_REWARDS] != Py_None || obj[SA_COMPONENTS] != Py_None) && self->weights == NULL) {
        return PyErr_Format(PyExc_ValueError, "rewards need reward weights: call set_reward_weights first");
    }
    if (obj[SA_OBS] != Py_None && obj[SA_MASKS] == Py_None) {
        return PyErr_Format(PyExc_ValueError, "observations need the masks array too (entries 168-174 repeat masks)");
    }
    step_arrays a = {.held = {0}};
    Py_ssize_t n = self->n, n_parts = n * 2 * NH_NUM_REWARD_COMPONENTS;
    if (hold(&a, SA_ACTIONS, INT32_ARRAY(obj[SA_ACTIONS], &a.views[SA_ACTIONS], 0, n * 2 * 12, "actions")) ||
        hold(&a, SA_HAS, INT32_ARRAY(obj[SA_HAS], &a.views[SA_HAS], 0, n * 2, "has_action")) ||
        hold(&a, SA_RESULTS, INT32_ARRAY(obj[SA_RESULTS], &a.views[SA_RESULTS], 1, n * 4, "results")) ||
        (obj[SA_MASKS] != Py_None &&
         hold(&a, SA_MASKS, BYTE_ARRAY(obj[SA_MASKS], &a.views[SA_MASKS], n * 2 * NH_NUM_MASK, "masks"))) ||
        (obj[SA_OBS] != Py_None &&
         hold(&a, SA_OBS, FLOAT32_ARRAY(obj[SA_OBS], &a.views[SA_OBS], n * 2 * NH_OBS_SIZE, "observations"))) ||
        (obj[SA_REWARDS] != Py_None &&
         hold(&a, SA_REWARDS, FLOAT64_ARRAY(obj[SA_REWARDS], &a.views[SA_REWARDS], n * 2, "rewards"))) ||
        (obj[SA_COMPONENTS] != Py_None &&
         hold(&a, SA_COMPONENTS, FLOAT64_ARRAY(obj[SA_COMPONENTS], &a.views[SA_COMPONENTS], n_parts, "components")))) {
        release_arrays(&a);
        return NULL;
    }
    const int32_t(*act)[2][12] = (const int32_t(*)[2][12])a.views[SA_ACTIONS].buf;
    const int32_t(*flags)[2] = (const int32_t(*)[2])a.views[SA_HAS].buf;
    int32_t(*out)[4] = (int32_t(*)[4])a.views[SA_RESULTS].buf;
    uint8_t *mask_out = a.held[SA_MASKS] ? (uint8_t *)a.views[SA_MASKS].buf : NULL;
    float *obs_out = a.held[SA_OBS] ? (float *)a.views[SA_OBS].buf : NULL;
    double *rew_out = a.held[SA_REWARDS] ? (double *)a.views[SA_REWARDS].buf : NULL;
    double *comp_out = a.held[SA_COMPONENTS] ? (double *)a.views[SA_COMPONENTS].buf : NULL;
    Py_ssize_t stepped = 0, failed = -1;
    int err = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = only < 0 ? 0 : only; i < (only < 0 ? n : only + 1); i++) {
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
            write_fight_masks(fight, i, mask_out, obs_out);
        }
        stepped++;
    }
    Py_END_ALLOW_THREADS
    release_arrays(&a);
    if (failed >= 0) {
        return PyErr_Format(PyExc_RuntimeError, "fight %zd: error %d in the core (reset it; a done fight is skipped)",
                            failed, err);
    }
    return PyLong_FromSsize_t(stepped);
}

/* ---- rewards (§17) --------------------------------------------------------------------------------------------- */

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

static int parse_switch(PyObject *v, const char *name, int32_t *out) {
    if (!PyBool_Check(v)) {
        PyErr_Format(PyExc_TypeError, "reward weight %s must be true or false", name);
        return -1;
    }
    *out = v == Py_True;
    return 0;
}

/* One group of RewardWeights fields (generated names) parsed by `parse` into consecutive items of `out`. */
#define PARSE_WEIGHTS(names, count, out, parse)                                                                        \
    for (int k = 0; k < (count); k++) {                                                                                \
        PyObject *v = weight_item(mapping, (names)[k]);                                                                \
        int err_ = v == NULL || parse(v, (names)[k], &(out)[k]);                                                       \
        Py_XDECREF(v);                                                                                                 \
        if (err_) {                                                                                                    \
            return NULL;                                                                                               \
        }                                                                                                              \
    }

/* set_reward_weights(mapping): every RewardWeights field by name (NH_*_NAMES, generated from its fields),
 * parsed whole into a scratch struct first, so bad input changes nothing; keeps the progress. */
static PyObject *FightBatch_set_reward_weights(FightBatchObject *self, PyObject *mapping) {
    if (!PyMapping_Check(mapping)) {
        return PyErr_Format(PyExc_TypeError, "reward weights must be a mapping of RewardWeights fields");
    }
    nh_reward_weights w;
    memset(&w, 0, sizeof(w));
    PARSE_WEIGHTS(NH_SCHEDULED_WEIGHT_NAMES, NH_NUM_SCHEDULED_WEIGHTS, w.scheduled, parse_schedule)
    PARSE_WEIGHTS(NH_FLOAT_WEIGHT_NAMES, NH_NUM_FLOAT_WEIGHTS, w.floats, finite_double)
    PARSE_WEIGHTS(NH_SWITCH_NAMES, NH_NUM_WEIGHT_SWITCHES, w.switches, parse_switch)
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

/* signals(i, p): rewards.signals_for's dict of player p's last step (NH_SIGNAL_FIELDS), None for a baseline
 * player or before a step. */
static PyObject *FightBatch_signals(FightBatchObject *self, PyObject *args) {
    Py_ssize_t i;
    int p;
    if (nhb_fight_args(self, args, &i, &p) == NULL) {
        return NULL;
    }
    const nh_reward_state *rs = &self->rewards[i];
    if (!rs->has_signals[p]) {
        Py_RETURN_NONE;
    }
    return nhb_to_dict(&rs->signals[p], NH_SIGNAL_FIELDS, NH_NUM_SIGNAL_FIELDS);
}

static PyObject *FightBatch_len(FightBatchObject *self, void *closure) {
    (void)closure;
    return PyLong_FromSsize_t(self->n);
}

static PyMethodDef FightBatch_methods[] = {
    {"reset", (PyCFunction)FightBatch_reset, METH_VARARGS,
     "reset(i, rng_state, params): FightSim.reset of fight i (params: envs.nh.core.reset_params)."},
    {"step_batch", (PyCFunction)(void (*)(void))FightBatch_step_batch, METH_VARARGS | METH_KEYWORDS,
     "step_batch(actions, has_action, results, masks=None, obs=None, rewards=None, components=None, only=-1): one "
     "tick of every running fight, or of fight `only` alone when only >= 0 (the others' rows are left as they are)."},
    {"write_masks", (PyCFunction)FightBatch_write_masks, METH_VARARGS,
     "write_masks(masks, obs=None, fight=-1): both players' masks (and observations) of every fight, or of one fight "
     "when fight >= 0 (after resets)."},
    {"set_reward_weights", (PyCFunction)FightBatch_set_reward_weights, METH_O,
     "set_reward_weights(mapping): every RewardWeights field by name (schedules as (a, b, n)); keeps progress."},
    {"rng_state", (PyCFunction)FightBatch_rng_state, METH_VARARGS, "rng_state(i): fight i's generator state."},
    {"set_rng_state", (PyCFunction)FightBatch_set_rng_state, METH_VARARGS, "set_rng_state(i, state)."},
    {"brief", (PyCFunction)FightBatch_brief, METH_VARARGS,
     "brief(i): (tick, done, build, fight_mode, hp0, hp1, is_baseline0, is_baseline1) of fight i."},
    {"hitsplats", (PyCFunction)FightBatch_hitsplats, METH_VARARGS,
     "hitsplats(i, p): the hitsplats player p of fight i was shown this tick, as a tuple (cheaper than player())."},
    {"fight", (PyCFunction)FightBatch_fight, METH_VARARGS, "fight(i): tick, done, fight mode and build of fight i."},
    {"player", (PyCFunction)FightBatch_player, METH_VARARGS, "player(i, p): PlayerState p of fight i as a dict."},
    {"events", (PyCFunction)FightBatch_events, METH_VARARGS, "events(i, p): TickEvents of player p as a dict."},
    {"signals", (PyCFunction)FightBatch_signals, METH_VARARGS,
     "signals(i, p): rewards.signals_for dict of player p's last step, None for a baseline or before a step."},
    NH_TESTING_FIGHT_METHODS /* the drivers' methods, in the testing build only */
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FightBatch_getset[] = {
    {"n_fights", (getter)FightBatch_len, NULL, "Number of fights.", NULL},
    {"progress", (getter)FightBatch_get_progress, (setter)FightBatch_set_progress,
     "Training progress for the reward schedules (§17.4); needs reward weights.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FightBatchType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = NH_MODULE_NAME ".FightBatch",
    .tp_doc = PyDoc_STR("A batch of NH fights in one flat array, allocated once; FightBatch(n_fights)."),
    .tp_basicsize = sizeof(FightBatchObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FightBatch_init,
    .tp_dealloc = (destructor)FightBatch_dealloc,
    .tp_methods = FightBatch_methods,
    .tp_getset = FightBatch_getset,
};

/* ---- module ------------------------------------------------------------------------------------------------ */

static struct PyModuleDef nhcore_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = NH_MODULE_NAME,
    .m_doc = "The compiled NH simulator core (C); see docs/compiled-core.md.",
    .m_size = -1,
};

/* Refuse to load when the checkout's C sources are not those this module was built from (envs/nh/core/_sources.py
 * says how to rebuild): an old build would run old rules. */
static int check_sources(void) {
    PyObject *sources = PyImport_ImportModule("envs.nh.core._sources");
    PyObject *ok = sources ? PyObject_CallMethod(sources, "check_build", "ss", NH_SOURCE_HASH, NH_MODULE_NAME) : NULL;
    Py_XDECREF(sources);
    Py_XDECREF(ok);
    return ok == NULL ? -1 : 0;
}

int nhb_module_add(PyObject *m, const char *name, PyObject *value) {
    int err = value == NULL ? -1 : PyModule_AddObjectRef(m, name, value);
    Py_XDECREF(value);
    return err;
}

/* FIELDS: {table: field names} of the generated tables this build marshals by. */
static PyObject *fields_dict(void) {
    return Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "reset_params",
                         field_names(NH_RESET_INT_FIELDS, NH_NUM_RESET_INT_FIELDS), "player",
                         field_names(NH_PLAYER_FIELDS, NH_NUM_PLAYER_FIELDS), "pending_hit",
                         field_names(NH_PENDING_HIT_FIELDS, NH_NUM_PENDING_HIT_FIELDS), "loadout",
                         field_names(NH_LOADOUT_FIELDS, NH_NUM_LOADOUT_FIELDS), "events",
                         field_names(NH_TICK_EVENTS_FIELDS, NH_NUM_TICK_EVENTS_FIELDS), "signals",
                         field_names(NH_SIGNAL_FIELDS, NH_NUM_SIGNAL_FIELDS), "reward_weights",
                         Py_BuildValue("(NNN)", name_tuple(NH_SCHEDULED_WEIGHT_NAMES, NH_NUM_SCHEDULED_WEIGHTS),
                                       name_tuple(NH_FLOAT_WEIGHT_NAMES, NH_NUM_FLOAT_WEIGHTS),
                                       name_tuple(NH_SWITCH_NAMES, NH_NUM_WEIGHT_SWITCHES)));
}

PyMODINIT_FUNC NH_MODULE_INIT(void) {
    if (check_sources() != 0) {
        return NULL;
    }
    nh_data_init();
    if (PyType_Ready(&FightBatchType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&nhcore_module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "FightBatch", (PyObject *)&FightBatchType) < 0 ||
        nhb_module_add(m, "REWARD_COMPONENTS", name_tuple(NH_REWARD_COMPONENT_NAMES, NH_NUM_REWARD_COMPONENTS)) < 0 ||
        nhb_module_add(m, "FIELDS", fields_dict()) < 0 ||
        PyModule_AddStringConstant(m, "SOURCE_HASH", NH_SOURCE_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#ifdef NH_TESTING
    if (nh_testing_init(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    return m;
}
