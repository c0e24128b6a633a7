/* rpe-colormap.h: tabulated colour maps (GTK-free).
 *
 * Sequential, perceptually uniform maps with 256 entries each: viridis, magma,
 * inferno, cividis (the published tables, see ui/gen-colormaps.py); a diverging
 * map centred on 0.5 for signed data ("rdbu", ColorBrewer RdBu reversed: blue
 * below the centre, near-white at it, red above); and a linear "grey" ramp.
 *
 * Mapping follows matplotlib's ListedColormap: t in [0, 1] selects entry
 * floor(t * 256), clamped to 0..255, so t = 0 gives the bottom entry and t = 1
 * the top entry.  NaN maps to the bottom entry.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum
{
  RPE_COLORMAP_VIRIDIS,
  RPE_COLORMAP_MAGMA,
  RPE_COLORMAP_INFERNO,
  RPE_COLORMAP_CIVIDIS,
  RPE_COLORMAP_RDBU,
  RPE_COLORMAP_GREY,
  RPE_COLORMAP_N_MAPS,
} RpeColormapId;

#define RPE_COLORMAP_SIZE 256

typedef struct _RpeColormap RpeColormap;

/* The map with this id; NULL if the id is out of range. */
const RpeColormap *rpe_colormap_get (RpeColormapId id);
/* Lookup by name ("viridis", "magma", "inferno", "cividis", "rdbu", "grey";
 * also "gray" and "diverging"), case-insensitive.  NULL if unknown. */
const RpeColormap *rpe_colormap_lookup (const char *name);
const RpeColormap *rpe_colormap_default (void);              /* viridis */
const RpeColormap *rpe_colormap_default_diverging (void);    /* rdbu */

const char    *rpe_colormap_get_name (const RpeColormap *cmap);
RpeColormapId  rpe_colormap_get_id (const RpeColormap *cmap);
/* True for maps meant for signed data (centre = 0.5 <-> value 0). */
bool           rpe_colormap_is_diverging (const RpeColormap *cmap);

/* Colour of t in [0, 1] (clamped) as RGB components in [0, 1]. */
void rpe_colormap_map (const RpeColormap *cmap,
                       double             t,
                       double             rgb[3]);
/* Colour of t in [0, 1] (clamped) as 8-bit RGB (each component rounded). */
void rpe_colormap_map_u8 (const RpeColormap *cmap,
                          double             t,
                          uint8_t            rgb[3]);
/* Entry i (0..RPE_COLORMAP_SIZE-1, clamped) of the table, components in [0, 1]. */
void rpe_colormap_entry (const RpeColormap *cmap,
                         size_t             i,
                         double             rgb[3]);

/* The table entry rpe_colormap_map (and _map_u8) use for t: floor (t * RPE_COLORMAP_SIZE),
 * clamped (NaN -> 0), as matplotlib's ListedColormap (t = 1 -> the last entry).  Inline:
 * per-pixel loops call it. */
static inline size_t
rpe_colormap_index (double t)
{
  size_t i;

  if (!(t > 0.0))   /* also NaN */
    return 0;
  if (t >= 1.0)
    return RPE_COLORMAP_SIZE - 1;
  i = (size_t) (t * RPE_COLORMAP_SIZE);
  return i < RPE_COLORMAP_SIZE ? i : RPE_COLORMAP_SIZE - 1;
}
/* Every entry as rpe_colormap_map_u8 gives it, packed 0x00RRGGBB (cairo RGB24), so that
 * per-pixel loops map a value with rpe_colormap_index and one table load:
 * lut[rpe_colormap_index (t)] equals the packed rpe_colormap_map_u8 (cmap, t). */
void rpe_colormap_rgb24_table (const RpeColormap *cmap,
                               uint32_t           lut[RPE_COLORMAP_SIZE]);
