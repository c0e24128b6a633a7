/* rpe-colormap.c: tabulated colour maps (GTK-free). */
#include "config.h"

#include "rpe-colormap.h"

#include <math.h>
#include <strings.h>

#include "rpe-colormap-data.h"

struct _RpeColormap
{
  RpeColormapId  id;
  const char    *name;
  const float  (*table)[3];   /* RPE_COLORMAP_SIZE entries; NULL for the grey ramp */
  bool           diverging;
};

static const RpeColormap colormaps[RPE_COLORMAP_N_MAPS] = {
  { RPE_COLORMAP_VIRIDIS, "viridis", rpe_colormap_viridis_data, false },
  { RPE_COLORMAP_MAGMA,   "magma",   rpe_colormap_magma_data,   false },
  { RPE_COLORMAP_INFERNO, "inferno", rpe_colormap_inferno_data, false },
  { RPE_COLORMAP_CIVIDIS, "cividis", rpe_colormap_cividis_data, false },
  { RPE_COLORMAP_RDBU,    "rdbu",    rpe_colormap_rdbu_r_data,  true  },
  { RPE_COLORMAP_GREY,    "grey",    NULL,                      false },
};

const RpeColormap *
rpe_colormap_get (RpeColormapId id)
{
  if ((int) id < 0 || id >= RPE_COLORMAP_N_MAPS)
    return NULL;
  return &colormaps[id];
}

const RpeColormap *
rpe_colormap_lookup (const char *name)
{
  if (name == NULL)
    return NULL;
  for (size_t i = 0; i < RPE_COLORMAP_N_MAPS; i++)
    if (strcasecmp (name, colormaps[i].name) == 0)
      return &colormaps[i];
  if (strcasecmp (name, "gray") == 0 || strcasecmp (name, "greys") == 0)
    return &colormaps[RPE_COLORMAP_GREY];
  if (strcasecmp (name, "diverging") == 0 || strcasecmp (name, "rdbu_r") == 0)
    return &colormaps[RPE_COLORMAP_RDBU];
  return NULL;
}

const RpeColormap *
rpe_colormap_default (void)
{
  return &colormaps[RPE_COLORMAP_VIRIDIS];
}

const RpeColormap *
rpe_colormap_default_diverging (void)
{
  return &colormaps[RPE_COLORMAP_RDBU];
}

const char *
rpe_colormap_get_name (const RpeColormap *cmap)
{
  return cmap != NULL ? cmap->name : NULL;
}

RpeColormapId
rpe_colormap_get_id (const RpeColormap *cmap)
{
  return cmap != NULL ? cmap->id : RPE_COLORMAP_VIRIDIS;
}

bool
rpe_colormap_is_diverging (const RpeColormap *cmap)
{
  return cmap != NULL && cmap->diverging;
}

void
rpe_colormap_entry (const RpeColormap *cmap,
                    size_t             i,
                    double             rgb[3])
{
  if (cmap == NULL)
    cmap = rpe_colormap_default ();
  if (i >= RPE_COLORMAP_SIZE)
    i = RPE_COLORMAP_SIZE - 1;

  if (cmap->table == NULL)
    {
      double v = (double) i / (RPE_COLORMAP_SIZE - 1);
      rgb[0] = rgb[1] = rgb[2] = v;
      return;
    }
  for (int c = 0; c < 3; c++)
    rgb[c] = cmap->table[i][c];
}

void
rpe_colormap_map (const RpeColormap *cmap,
                  double             t,
                  double             rgb[3])
{
  rpe_colormap_entry (cmap, rpe_colormap_index (t), rgb);
}

static void
entry_u8 (const RpeColormap *cmap,
          size_t             i,
          uint8_t            rgb[3])
{
  double v[3];

  rpe_colormap_entry (cmap, i, v);
  for (int c = 0; c < 3; c++)
    {
      double x = floor (v[c] * 255.0 + 0.5);
      rgb[c] = (uint8_t) (x < 0 ? 0 : x > 255 ? 255 : x);
    }
}

void
rpe_colormap_map_u8 (const RpeColormap *cmap,
                     double             t,
                     uint8_t            rgb[3])
{
  entry_u8 (cmap, rpe_colormap_index (t), rgb);
}

void
rpe_colormap_rgb24_table (const RpeColormap *cmap,
                          uint32_t           lut[RPE_COLORMAP_SIZE])
{
  for (size_t i = 0; i < RPE_COLORMAP_SIZE; i++)
    {
      uint8_t rgb[3];

      entry_u8 (cmap, i, rgb);
      lut[i] = ((uint32_t) rgb[0] << 16) | ((uint32_t) rgb[1] << 8) | rgb[2];
    }
}
