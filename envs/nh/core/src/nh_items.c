/* nh_items.c: look-ups into the generated item and consumable tables (nh_data.h). */
#include "nh_data.h"

#include <stddef.h>
#include <stdint.h>

/* Dense id -> row indices, built once from the sorted tables (nh_data_init): the tick looks items and
 * consumables up by id many times, and a binary search per look-up dominated the masks' cost. */
static int16_t item_row[NH_MAX_ITEM_ID + 1];
static int16_t consumable_row[NH_MAX_ITEM_ID + 1];
static int lookup_ready = 0;

static const nh_item *item_by_id_search(int32_t id);
static const nh_consumable *consumable_by_id_search(int32_t id);

void nh_data_init(void) {
    if (lookup_ready) {
        return;
    }
    for (int32_t id = 0; id <= NH_MAX_ITEM_ID; id++) {
        item_row[id] = -1;
        consumable_row[id] = -1;
    }
    for (int32_t i = 0; i < NH_N_ITEMS; i++) {
        if (NH_ITEMS[i].id >= 0 && NH_ITEMS[i].id <= NH_MAX_ITEM_ID) {
            item_row[NH_ITEMS[i].id] = (int16_t)i;
        }
    }
    for (int32_t i = 0; i < NH_N_CONSUMABLES; i++) {
        if (NH_CONSUMABLES[i].id >= 0 && NH_CONSUMABLES[i].id <= NH_MAX_ITEM_ID) {
            consumable_row[NH_CONSUMABLES[i].id] = (int16_t)i;
        }
    }
    lookup_ready = 1;
}

const nh_item *nh_item_by_id(int32_t id) {
    if (lookup_ready && id >= 0 && id <= NH_MAX_ITEM_ID) {
        return item_row[id] >= 0 ? &NH_ITEMS[item_row[id]] : NULL;
    }
    return item_by_id_search(id);
}

const nh_special *nh_special_of(int32_t weapon) {
    for (int32_t i = 0; i < NH_N_SPECIALS; i++) {
        if (NH_SPECIAL_TABLE[i].weapon == weapon) {
            return &NH_SPECIAL_TABLE[i];
        }
    }
    return NULL;
}

const nh_consumable *nh_consumable_by_id(int32_t id) {
    if (lookup_ready && id >= 0 && id <= NH_MAX_ITEM_ID) {
        return consumable_row[id] >= 0 ? &NH_CONSUMABLES[consumable_row[id]] : NULL;
    }
    return consumable_by_id_search(id);
}

static const nh_item *item_by_id_search(int32_t id) {
    int32_t lo = 0, hi = NH_N_ITEMS - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (NH_ITEMS[mid].id == id) {
            return &NH_ITEMS[mid];
        }
        if (NH_ITEMS[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return NULL;
}

static const nh_consumable *consumable_by_id_search(int32_t id) {
    int32_t lo = 0, hi = NH_N_CONSUMABLES - 1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (NH_CONSUMABLES[mid].id == id) {
            return &NH_CONSUMABLES[mid];
        }
        if (NH_CONSUMABLES[mid].id < id) {
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return NULL;
}

int32_t nh_potion_id(int32_t potion, int32_t doses) {
    for (int32_t i = 0; i < NH_N_CONSUMABLES; i++) {
        if (NH_CONSUMABLES[i].potion == potion && NH_CONSUMABLES[i].doses == doses) {
            return NH_CONSUMABLES[i].id;
        }
    }
    return NH_EMPTY;
}
