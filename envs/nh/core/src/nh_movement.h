/*
 * nh_movement.h: tiles, paths, reach and following on open ground (spec §11).
 *
 * Mirrors envs/nh/movement.py function by function. The walk queue is nh_player's ring buffer
 * (`walk_queue`, `walk_head`, `n_walk_queue`); appending past NH_MAX_WALK_QUEUE tiles is reported as
 * NH_ERR_WALK_QUEUE_FULL (Python's deque has no bound; a fight never needs that many tiles).
 */
#ifndef NH_MOVEMENT_H
#define NH_MOVEMENT_H

#include <stdint.h>

#include "nh_state.h"

#define NH_ERR_WALK_QUEUE_FULL 7
#define NH_MAX_CANDIDATES 64 /* tiles of one §5.8 candidate list: a farcast ring has up to 8k tiles */

static inline int32_t nh_cheb(int32_t ax, int32_t ay, int32_t bx, int32_t by) {
    int32_t dx = ax - bx, dy = ay - by;
    dx = dx >= 0 ? dx : -dx;
    dy = dy >= 0 ? dy : -dy;
    return dx > dy ? dx : dy;
}

static inline int32_t nh_distance(const nh_player *a, const nh_player *b) { return nh_cheb(a->x, a->y, b->x, b->y); }

int nh_in_wilderness(int32_t x, int32_t y);
int nh_in_melee_range(const nh_player *a, const nh_player *b);
/* The queue's last tile, or the player's own tile when it is empty. */
void nh_queue_end(const nh_player *p, int32_t *x, int32_t *y);
/* Append a path from the queue's end to (tx, ty) (§11.2). Returns 0 or NH_ERR_WALK_QUEUE_FULL. */
int nh_append_path(nh_player *p, int32_t tx, int32_t ty, int diagonal_first);
void nh_reset_walk(nh_player *p);
/* The reach test of §11.6; `side_effect` queues the step-out path. *err gets NH_ERR_WALK_QUEUE_FULL. */
int nh_can_reach(nh_player *attacker, const nh_player *target, int melee, int32_t range_tiles, int side_effect,
                 int *err);
/* Combat following (§11.4). Returns 0 or NH_ERR_WALK_QUEUE_FULL. */
int nh_follow(nh_player *p, const nh_player *t, int melee, int32_t range_tiles);
/* Pop one step (two when running), update run energy and the moving flag (§11.3). */
void nh_take_steps(nh_player *p);
/* §5.8 candidates tied for the best (Cheb to player, Cheb to target), inside the wilderness, in offset
 * order, into out[NH_MAX_CANDIDATES][2]; returns their number, -1 if more tie (never on the §5.8 rings). */
int32_t nh_movement_candidates(int32_t px, int32_t py, int32_t tx, int32_t ty, const int64_t (*offsets)[2],
                               int32_t n_offsets, int32_t (*out)[2]);
/* The square ring at Chebyshev distance k (movement.ring_offsets order) into out; returns its size. */
int32_t nh_ring_offsets(int32_t k, int64_t (*out)[2], int32_t capacity);

#endif /* NH_MOVEMENT_H */
