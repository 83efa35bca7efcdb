/* nh_movement.c: §11 movement; see nh_movement.h and envs/nh/movement.py (the reference). */
#include "nh_movement.h"

static int32_t sign32(int32_t v) { return (v > 0) - (v < 0); }
static int32_t abs32(int32_t v) { return v >= 0 ? v : -v; }

int nh_in_wilderness(int32_t x, int32_t y) {
    return NH_WILDERNESS_X[0] <= x && x <= NH_WILDERNESS_X[1] && NH_WILDERNESS_Y[0] <= y && y <= NH_WILDERNESS_Y[1];
}

int nh_in_melee_range(const nh_player *a, const nh_player *b) { return abs32(a->x - b->x) + abs32(a->y - b->y) == 1; }

void nh_queue_end(const nh_player *p, int32_t *x, int32_t *y) {
    if (p->n_walk_queue > 0) {
        const int32_t *last = p->walk_queue[(p->walk_head + p->n_walk_queue - 1) % NH_MAX_WALK_QUEUE];
        *x = last[0];
        *y = last[1];
    } else {
        *x = p->x;
        *y = p->y;
    }
}

static int push_tile(nh_player *p, int32_t x, int32_t y) {
    if (p->n_walk_queue >= NH_MAX_WALK_QUEUE) {
        return NH_ERR_WALK_QUEUE_FULL;
    }
    int32_t *slot = p->walk_queue[(p->walk_head + p->n_walk_queue) % NH_MAX_WALK_QUEUE];
    slot[0] = x;
    slot[1] = y;
    p->n_walk_queue++;
    return 0;
}

int nh_append_path(nh_player *p, int32_t tx, int32_t ty, int diagonal_first) {
    int32_t x, y;
    nh_queue_end(p, &x, &y);
    while (x != tx || y != ty) {
        if (diagonal_first) { /* path_diagonal_first */
            x += sign32(tx - x);
            y += sign32(ty - y);
        } else { /* path_straight_first */
            int32_t rx = tx - x, ry = ty - y, ax = abs32(rx), ay = abs32(ry);
            if (ax > ay) {
                x += sign32(rx);
            } else if (ay > ax) {
                y += sign32(ry);
            } else {
                x += sign32(rx);
                y += sign32(ry);
            }
        }
        int err = push_tile(p, x, y);
        if (err) {
            return err;
        }
    }
    return 0;
}

void nh_reset_walk(nh_player *p) {
    p->n_walk_queue = 0;
    p->walk_head = 0;
    p->moving = 0;
}

int nh_can_reach(nh_player *attacker, const nh_player *target, int melee, int32_t range_tiles, int side_effect,
                 int *err) {
    int32_t dx = attacker->x - target->x, dy = attacker->y - target->y;
    int32_t adx = abs32(dx), ady = abs32(dy);
    int32_t d = adx > ady ? adx : ady;
    *err = 0;
    if (d == 0) {
        return 0;
    }
    if (!melee) {
        return d <= range_tiles;
    }
    int32_t required = (attacker->moving && target->moving) ? (int32_t)NH_MELEE_RANGE_BOTH_MOVING_TILES
                                                            : (int32_t)NH_MELEE_RANGE_TILES;
    if (d > required) {
        return 0;
    }
    if (!target->moving && adx == 1 && ady == 1) {
        if (side_effect) { /* step_out_tile: the E/W neighbour of the target on the attacker's side */
            *err = nh_append_path(attacker, target->x + sign32(attacker->x - target->x), target->y, 0);
        }
        return 0;
    }
    return 1;
}

int nh_follow(nh_player *p, const nh_player *t, int melee, int32_t range_tiles) {
    nh_reset_walk(p);
    if (abs32(p->x - t->x) > NH_FOLLOW_MAX_AXIS_TILES || abs32(p->y - t->y) > NH_FOLLOW_MAX_AXIS_TILES) {
        p->target = NH_NO_PLAYER;
        return 0;
    }
    int err;
    if (nh_can_reach(p, t, melee, range_tiles, 1, &err) || err) {
        return err;
    }
    int32_t dx = p->x - t->x, dy = p->y - t->y, tx, ty;
    if (melee || (p->x == t->x && p->y == t->y)) { /* melee_follow_tile */
        int32_t adx = abs32(dx), ady = abs32(dy);
        if (adx > ady || (adx == ady && adx <= 1)) {
            tx = t->x + (dx >= 0 ? 1 : -1);
            ty = t->y;
        } else {
            tx = t->x;
            ty = t->y + (dy > 0 ? 1 : -1);
        }
    } else { /* ranged_follow_tile */
        int32_t r = range_tiles;
        tx = t->x + (dx < -r ? -r : dx > r ? r : dx);
        ty = t->y + (dy < -r ? -r : dy > r ? r : dy);
    }
    return nh_append_path(p, tx, ty, 0);
}

void nh_take_steps(nh_player *p) {
    int moved = 0;
    for (int k = 0; k < (p->running ? 2 : 1); k++) {
        if (p->n_walk_queue == 0) {
            break;
        }
        const int32_t *tile = p->walk_queue[p->walk_head];
        p->x = tile[0];
        p->y = tile[1];
        p->walk_head = (p->walk_head + 1) % NH_MAX_WALK_QUEUE;
        p->n_walk_queue--;
        moved = 1;
    }
    if (moved && p->running) {
        p->run_energy -= 1;
        if (p->run_energy <= 0) {
            p->run_energy = 0;
            p->running = 0;
        }
    }
    p->moving = moved;
}

int32_t nh_movement_candidates(int32_t px, int32_t py, int32_t tx, int32_t ty, const int64_t (*offsets)[2],
                               int32_t n_offsets, int32_t (*out)[2]) {
    int32_t n = 0;
    int32_t best_p = 1 << 30, best_t = 1 << 30;
    for (int32_t i = 0; i < n_offsets; i++) {
        int32_t ox = (int32_t)offsets[i][0], oy = (int32_t)offsets[i][1];
        int32_t x = tx + ox, y = ty + oy;
        if (!nh_in_wilderness(x, y)) {
            continue;
        }
        int32_t to_p = nh_cheb(x, y, px, py);
        if (to_p > best_p) {
            continue;
        }
        int32_t aox = abs32(ox), aoy = abs32(oy);
        int32_t to_t = aox > aoy ? aox : aoy;
        if (to_p < best_p || to_t < best_t) {
            best_p = to_p;
            best_t = to_t;
            n = 0;
            out[n][0] = x, out[n][1] = y, n++;
        } else if (to_t == best_t) {
            if (n >= NH_MAX_CANDIDATES) {
                return -1;
            }
            out[n][0] = x, out[n][1] = y, n++;
        }
    }
    return n;
}

int32_t nh_ring_offsets(int32_t k, int64_t (*out)[2], int32_t capacity) {
    int32_t n = 0;
    for (int32_t ox = -k; ox <= k; ox++) {
        for (int32_t oy = -k; oy <= k; oy++) {
            if ((abs32(ox) > abs32(oy) ? abs32(ox) : abs32(oy)) == k && n < capacity) {
                out[n][0] = ox;
                out[n][1] = oy;
                n++;
            }
        }
    }
    return n;
}
