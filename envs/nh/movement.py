"""Tiles, paths, reach and following on open ground (spec §11).

The simulator treats the fight area as open ground without collision (spec §11.1 [DEV]), so every
"reachable" and "clear projectile line" check is true and paths have the closed form of §11.2.
"""

from __future__ import annotations

from collections.abc import Iterator

from envs.nh.state import PlayerState

WILDERNESS_X = (2940, 3392)  # §11.1, inclusive; filters only the §5.8 candidates [DEV]
WILDERNESS_Y = (3525, 3968)  # §11.1
FOLLOW_MAX_AXIS_TILES = 15  # §11.4 step 2
MELEE_RANGE_TILES = 1  # §6.2
MELEE_RANGE_BOTH_MOVING_TILES = 2  # §11.6
MAX_ATTACK_DISTANCE_TILES = 40  # §6.1 check (d): attacks need < 40 tiles

CARDINALS = ((0, 1), (1, 0), (0, -1), (-1, 0))  # N, E, S, W (§5.8 "adjacent")
DIAGONALS = ((1, 1), (1, -1), (-1, -1), (-1, 1))  # NE, SE, SW, NW (§5.8 "diagonal")


def cheb(ax: int, ay: int, bx: int, by: int) -> int:
    """Chebyshev distance (spec conventions)."""
    return max(abs(ax - bx), abs(ay - by))


def distance(a: PlayerState, b: PlayerState) -> int:
    return cheb(a.x, a.y, b.x, b.y)


def in_wilderness(x: int, y: int) -> bool:
    return WILDERNESS_X[0] <= x <= WILDERNESS_X[1] and WILDERNESS_Y[0] <= y <= WILDERNESS_Y[1]


def in_melee_range(a: PlayerState, b: PlayerState) -> bool:
    """"In melee range" for observations and masks: distance 1 and not diagonal (spec §11.6)."""
    dx = abs(a.x - b.x)
    dy = abs(a.y - b.y)
    return dx + dy == 1


def _sign(v: int) -> int:
    return (v > 0) - (v < 0)


def path_straight_first(x: int, y: int, tx: int, ty: int) -> Iterator[tuple[int, int]]:
    """BFS path on open ground: straight along the longer axis, then diagonal (spec §11.2)."""
    while (x, y) != (tx, ty):
        rx, ry = tx - x, ty - y
        ax, ay = abs(rx), abs(ry)
        if ax > ay:
            x += _sign(rx)
        elif ay > ax:
            y += _sign(ry)
        else:
            x += _sign(rx)
            y += _sign(ry)
        yield x, y


def path_diagonal_first(x: int, y: int, tx: int, ty: int) -> Iterator[tuple[int, int]]:
    """Turning-point expansion of one destination: diagonal while both axes differ (spec §11.2, §18.4)."""
    while (x, y) != (tx, ty):
        x += _sign(tx - x)
        y += _sign(ty - y)
        yield x, y


def queue_end(p: PlayerState) -> tuple[int, int]:
    return p.walk_queue[-1] if p.walk_queue else (p.x, p.y)


def append_path(p: PlayerState, tx: int, ty: int, diagonal_first: bool = False) -> None:
    """Append a path from the queue's last tile (spec §11.2)."""
    sx, sy = queue_end(p)
    gen = path_diagonal_first if diagonal_first else path_straight_first
    p.walk_queue.extend(gen(sx, sy, tx, ty))


def reset_walk(p: PlayerState) -> None:
    """Clearing the walking queue also clears the moving flag (spec §11.3)."""
    p.walk_queue.clear()
    p.moving = False


def step_out_tile(attacker: PlayerState, target: PlayerState) -> tuple[int, int]:
    """From a diagonal tile: the E/W neighbour of the target on the attacker's side (spec §11.6)."""
    return target.x + _sign(attacker.x - target.x), target.y


def can_reach(attacker: PlayerState, target: PlayerState, melee: bool, range_tiles: int, side_effect: bool) -> bool:
    """The reach test of spec §11.6; `side_effect` queues the step-out path (own attack test only)."""
    dx = attacker.x - target.x
    dy = attacker.y - target.y
    adx = dx if dx >= 0 else -dx
    ady = dy if dy >= 0 else -dy
    d = adx if adx > ady else ady
    if d == 0:
        return False
    if not melee:
        return d <= range_tiles
    required = MELEE_RANGE_BOTH_MOVING_TILES if (attacker.moving and target.moving) else MELEE_RANGE_TILES
    if d > required:
        return False
    if not target.moving and adx == 1 and ady == 1:
        if side_effect:
            sx, sy = step_out_tile(attacker, target)
            append_path(attacker, sx, sy)
        return False
    return True


def melee_follow_tile(p: PlayerState, t: PlayerState) -> tuple[int, int]:
    """Cardinal neighbour of the target a melee follower walks to, open-ground form of spec §11.4."""
    dx, dy = p.x - t.x, p.y - t.y
    adx, ady = abs(dx), abs(dy)
    if adx > ady or (adx == ady and adx <= 1):
        return t.x + (1 if dx >= 0 else -1), t.y
    return t.x, t.y + (1 if dy > 0 else -1)


def ranged_follow_tile(p: PlayerState, t: PlayerState, r: int) -> tuple[int, int]:
    """Tile at distance `r` nearest the player: target + clamped offset (spec §11.4, open ground)."""
    dx, dy = p.x - t.x, p.y - t.y
    return t.x + max(-r, min(r, dx)), t.y + max(-r, min(r, dy))


def follow(p: PlayerState, t: PlayerState, melee: bool, range_tiles: int) -> None:
    """Combat following at the start of the movement step (spec §11.4)."""
    reset_walk(p)
    if abs(p.x - t.x) > FOLLOW_MAX_AXIS_TILES or abs(p.y - t.y) > FOLLOW_MAX_AXIS_TILES:
        p.target = None
        return
    if can_reach(p, t, melee, range_tiles, side_effect=True):
        return
    if melee or (p.x == t.x and p.y == t.y):
        tx, ty = melee_follow_tile(p, t)
    else:
        tx, ty = ranged_follow_tile(p, t, range_tiles)
    append_path(p, tx, ty)


def take_steps(p: PlayerState) -> None:
    """Pop one step (two when running) and update run energy and the moving flag (spec §11.3)."""
    q = p.walk_queue
    moved = False
    for _ in range(2 if p.running else 1):
        if not q:
            break
        p.x, p.y = q.popleft()
        moved = True
    if moved and p.running:
        p.run_energy -= 1
        if p.run_energy <= 0:
            p.run_energy = 0
            p.running = False
    p.moving = moved


def movement_candidates(
    px: int, py: int, tx: int, ty: int, offsets: tuple[tuple[int, int], ...]
) -> list[tuple[int, int]]:
    """Candidate destinations of spec §5.8 before the tie-break: inside the wilderness, best first.

    Returns every tile tied for the minimum of (Cheb to the player, Cheb to the target), in `offsets` order.
    """
    tiles = [(tx + ox, ty + oy) for ox, oy in offsets if in_wilderness(tx + ox, ty + oy)]
    ranked = [((cheb(px, py, x, y), cheb(tx, ty, x, y)), (x, y)) for x, y in tiles]
    if not ranked:
        return []
    best = min(rank for rank, _ in ranked)
    return [tile for rank, tile in ranked if rank == best]


def ring_offsets(k: int) -> tuple[tuple[int, int], ...]:
    """Offsets of the square ring at Chebyshev distance exactly `k` (spec §5.8 farcast)."""
    return tuple((ox, oy) for ox in range(-k, k + 1) for oy in range(-k, k + 1) if max(abs(ox), abs(oy)) == k)
