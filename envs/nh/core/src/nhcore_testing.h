/*
 * nhcore_testing.h: the differential tests' drivers (nhcore_testing.c), built only into the testing module
 * `envs.nh.core._nhcore_testing` (nhcore_module.c compiled with NH_TESTING, setup.py's second extension).
 *
 * They reach inside the core one function at a time (numpy's draws, one attack's rolls, a formula, a
 * movement or operations function on a loaded player) so that each port step could be compared with the
 * Python engine before the next began; production code steps whole fights through the batch API only.
 */
#ifndef NHCORE_TESTING_H
#define NHCORE_TESTING_H

#include "nhcore_binding.h"

/* A dict back into a struct by its field table (the inverse of nhb_to_dict); `skip_structs` keeps nested
 * structs (a player's loadout, fixed at reset). Leaves nothing half-loaded only when the caller parses into
 * a copy. */
int nhb_from_dict(PyObject *dict, void *base, const nh_field *fields, int32_t n, int skip_structs, const char *what);
/* A sequence of ints into out[]: exactly `n` items when n >= 0, else at most `cap` (their number into *count);
 * errors name `what` and `key`. */
int nhb_seq_ints(PyObject *v, const char *key, const char *what, int32_t *out, Py_ssize_t n, Py_ssize_t cap,
                 int32_t *count);

/* FightBatch methods of the drivers. */
PyObject *nht_set_player(FightBatchObject *self, PyObject *args);
PyObject *nht_create_hits(FightBatchObject *self, PyObject *args);
PyObject *nht_combat_numbers(FightBatchObject *self, PyObject *args);
PyObject *nht_movement(FightBatchObject *self, PyObject *args);
PyObject *nht_operation(FightBatchObject *self, PyObject *args);
PyObject *nht_activate_prayer(FightBatchObject *self, PyObject *args);
PyObject *nht_drain_special(FightBatchObject *self, PyObject *args);
PyObject *nht_step(FightBatchObject *self, PyObject *args);
PyObject *nht_stats(FightBatchObject *self, PyObject *args);
PyObject *nht_tasks(FightBatchObject *self, PyObject *args);
PyObject *nht_masks(FightBatchObject *self, PyObject *args);
PyObject *nht_observation(FightBatchObject *self, PyObject *args);
PyObject *nht_last_rewards(FightBatchObject *self, PyObject *args);
PyObject *nht_reward_components(FightBatchObject *self, PyObject *args);

#define NH_TESTING_METHOD(name, doc) {#name, (PyCFunction)nht_##name, METH_VARARGS, doc},

/* Appended to FightBatch's method table in the testing build. */
#define NH_TESTING_FIGHT_METHODS                                                                                     \
    NH_TESTING_METHOD(set_player, "set_player(i, p, snapshot): load player p of fight i from a .player() snapshot "  \
                                  "(loadout kept).")                                                                 \
    NH_TESTING_METHOD(create_hits, "create_hits(i, attacker, distance): combat.create_hits with fight i's generator.") \
    NH_TESTING_METHOD(combat_numbers, "combat_numbers(i, attacker, method): attack/defence rolls, damage range, "    \
                                      "range, speed.")                                                               \
    NH_TESTING_METHOD(movement, "movement(i, p, op, a=0, b=0, c=0): one movement.py function on player p of fight i.") \
    NH_TESTING_METHOD(operation, "operation(i, p, op, a=0, b=0): one operations.py function on player p of fight i.") \
    NH_TESTING_METHOD(activate_prayer, "activate_prayer(i, p, prayer): FightSim.activate_prayer (starts the drain).") \
    NH_TESTING_METHOD(drain_special, "drain_special(i, p, amount): FightSim.drain_special (starts regeneration).")   \
    NH_TESTING_METHOD(step, "step(i, actions=None): one tick of fight i; actions = (a0, a1), each 12 ints or None.")   \
    NH_TESTING_METHOD(stats, "stats(i, p): EpisodeStats of player p as a dict.")                                     \
    NH_TESTING_METHOD(tasks, "tasks(i): (kind, next_tick, period) per task.")                                        \
    NH_TESTING_METHOD(masks, "masks(i, p): the 45 mask booleans of player p.")                                       \
    NH_TESTING_METHOD(observation, "observation(i, p): the 176 observation entries of player p (float32 values).")  \
    NH_TESTING_METHOD(last_rewards, "last_rewards(i): (reward 0, reward 1).")                                        \
    NH_TESTING_METHOD(reward_components, "reward_components(i, p): the last step's reward components of player p.")

/* Adds Rng, ATTACK_FIELDS and the module functions (make_loadout, formulas, movement_candidates). */
int nh_testing_init(PyObject *m);

#endif /* NHCORE_TESTING_H */
