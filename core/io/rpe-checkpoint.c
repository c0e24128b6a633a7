#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-msgpack.h"

#include "rpe-npy.h"
#include "rpe-npz.h"
#include "rpe-pt.h"
#include "rpe-safetensors.h"

/* Module discovery by structure (docs/math.md, sections 3 and 10).
 *
 * Names are paths whose components are separated by '.' or '/' (PyTorch joins
 * with '.', Flax with '/', converted Flax files with either).  A module is found
 * by its leaves, whatever the attribute names above them:
 *   <dir>.freqs|offsets|gains                  (H, D, K)            sineSPE
 *   <dir>.conv_q.weight|conv_k.weight          (H*D, 1, L) or (H*D, 1, L1, L2)   convSPE (PyTorch)
 *   <dir>/conv_q/kernel|conv_k/kernel          (L, 1, H*D) or (L1, L2, 1, H*D)   convSPE (Flax)
 *   <gdir>.gate                                (H, D)               a filter's gate
 * PyTorch's query filter is conv_k.weight (the reference swaps them); Flax's is
 * conv_q/kernel.  g = sigmoid(gate), inverted (1 - sigmoid) in Flax modules.
 *
 * Convention.  Each module's convention (PyTorch or Flax) is decided from its
 * own tensors only: a Flax module has a '/' in the names of its code or gate
 * tensors, a Flax auto-name component ("SineSPE_0", "SPEGate_3") in them, or
 * conv "kernel" leaves.  Another tensor of the file (a "Dense_0/kernel" of the
 * model around it) never changes how a module is read.
 *
 * Layers.  A component that is a number ("spe.3", "spe_filters.3") or ends in
 * "_<number>" ("encoderblock_3", "EncoderBlock_3") is a layer index when
 * another module (or gate) has the same path with another number there; a
 * number that ends the path is one even alone ("spe_filters.0").  Replacing it
 * with '*' gives the module's pattern; modules with the same pattern form one
 * layered ("unshared") module, gates with the same pattern one per-layer filter.
 *
 * Owners.  A code module's owner is its pattern without the last component
 * (and without a trailing layer wildcard): "m.spe" -> "m", "m.spe.*" -> "m",
 * "p/encoderblock_* /SelfAttention_0/SineSPE_0" -> "p/encoderblock_* /SelfAttention_0"
 * (spaces added here only to keep this comment open).
 * A filter's owner likewise: "m.spe_filters.*" -> "m", "m.spe_filter" -> "m",
 * ".../SPEGate_0" -> "...".  A filter pairs with the code modules owned by its
 * owner or, if none, by the nearest ancestor of it that owns some (shape-
 * compatible first).  Each owner is one hash lookup, so discovery is linear in
 * the names' total length.
 *
 * Display prefix: the owner (PyTorch, when no other module has that owner),
 * else the pattern (always for Flax).  A selection's prefix accepts the
 * prefix, the pattern, the owner, one layer's concrete path (which picks that
 * layer), a path above exactly one module, and each of those with or without
 * a "module." or "model." wrapper (prefix_matches). */

#define MAX_LAYER_CANDIDATES 8
#define LIST_MAX             8         /* names or layers listed in a message, then a count */
#define MAX_LAYER_DIGITS     6
#define MAX_ANCESTOR_WALK    64

typedef struct _Group Group;
typedef struct _GateGroup GateGroup;

typedef struct
{
  char            *dir;
  RpeSpeMethod     method;
  gboolean         flax_kernel;        /* conv: kernel (L[, L2], 1, C) */
  const RpeTensor *slot[3];            /* sine: freqs, offsets, gains; conv: conv_q, conv_k */
  gsize            first_index;
  int              layer;
  Group           *group;
} Unit;

typedef struct
{
  const RpeTensor *tensor;
  char            *dir;
  int              layer;
  gsize            index;
  GateGroup       *group;
} GateUnit;

struct _Group
{
  char         *pattern;
  char         *owner;
  char         *prefix;
  RpeSpeMethod  method;
  gboolean      layered;
  gssize        star;                  /* layered: where the layer index is in the pattern */
  gboolean      flax;                  /* its own tensors are Flax's (see "Convention") */
  gsize         first_index;
  GPtrArray    *units;                 /* Unit*, sorted by layer */
  GPtrArray    *filters;               /* GateGroup* */
};

struct _GateGroup
{
  char      *pattern;
  char      *owner;
  gboolean   layered;
  gssize     star;                     /* layered: where the layer index is in the pattern */
  gboolean   flax;                     /* its gates' names are Flax's */
  gsize      first_index;
  GPtrArray *gates;                    /* GateUnit*, sorted by layer */
  GPtrArray *codes;                    /* Group* */
};

typedef struct
{
  GPtrArray *units;                    /* Unit*, owned */
  GPtrArray *gate_units;               /* GateUnit*, owned */
  GPtrArray *groups;                   /* Group*, owned, by first_index */
  GPtrArray *gate_groups;              /* GateGroup*, owned */
  GHashTable *sine_by_owner;           /* owner -> first sine Group* with it */
  gsize      charged;                  /* bytes held, as charged to the budget */
  gboolean   over_budget;
} Discovery;

typedef struct
{
  int    layer;
  gssize star;                         /* where the '*' is in the pattern, -1: none */
  char  *pattern;
} LayerInfo;

static const char *const sine_leaves[] = { "freqs", "offsets", "gains" };

static gsize
n_slots (RpeSpeMethod method)
{
  return method == RPE_SPE_SINE ? 3 : 2;
}

static gboolean
is_sep (char c)
{
  return c == '.' || c == '/';
}

/* Index of the last separator in s[0 .. len), or -1. */
static gssize
last_sep (const char *s,
          gsize       len)
{
  for (gsize i = len; i > 0; i--)
    if (is_sep (s[i - 1]))
      return (gssize) (i - 1);
  return -1;
}

static void
unit_free (gpointer p)
{
  Unit *u = p;

  g_free (u->dir);
  g_free (u);
}

static void
gate_unit_free (gpointer p)
{
  GateUnit *g = p;

  g_free (g->dir);
  g_free (g);
}

static void
group_free (gpointer p)
{
  Group *g = p;

  g_free (g->pattern);
  g_free (g->owner);
  g_free (g->prefix);
  g_ptr_array_unref (g->units);
  g_ptr_array_unref (g->filters);
  g_free (g);
}

static void
gate_group_free (gpointer p)
{
  GateGroup *g = p;

  g_free (g->pattern);
  g_free (g->owner);
  g_ptr_array_unref (g->gates);
  g_ptr_array_unref (g->codes);
  g_free (g);
}

static void
layer_info_free (gpointer p)
{
  LayerInfo *li = p;

  if (li == NULL)
    return;
  g_free (li->pattern);
  g_free (li);
}

static void
discovery_free (Discovery *dv)
{
  if (dv == NULL)
    return;
  g_ptr_array_unref (dv->groups);
  g_ptr_array_unref (dv->gate_groups);
  g_ptr_array_unref (dv->units);
  g_ptr_array_unref (dv->gate_units);
  if (dv->sine_by_owner != NULL)
    g_hash_table_unref (dv->sine_by_owner);
  g_free (dv);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC (Discovery, discovery_free)

/* ---- names ------------------------------------------------------------ */

/* A Flax auto-name: "SineSPE_0", "SPEGate_12" (upper-case start, "_<digits>" end). */
static gboolean
is_flax_autoname (const char *s,
                  gsize       len)
{
  gsize i = len;

  if (len < 3 || !g_ascii_isupper (s[0]))
    return FALSE;
  while (i > 0 && g_ascii_isdigit (s[i - 1]))
    i--;
  return i < len && i >= 2 && s[i - 1] == '_';
}

/* Whether one tensor name is Flax's: a '/' in it, a Flax auto-name component,
 * or a "kernel" leaf. */
static gboolean
name_is_flax (const char *name)
{
  gsize start = 0, len = strlen (name);

  if (strchr (name, '/') != NULL)
    return TRUE;
  for (gsize j = 0; j <= len; j++)
    if (j == len || is_sep (name[j]))
      {
        if (is_flax_autoname (name + start, j - start)
            || (j == len && strcmp (name + start, "kernel") == 0))
          return TRUE;
        start = j + 1;
      }
  return FALSE;
}

gboolean
rpe_checkpoint_is_flax (const RpeTensorSet *set)
{
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    if (name_is_flax (rpe_tensor_set_get (set, i)->name))
      return TRUE;
  return FALSE;
}

/* The layer-index digits of component s[0 .. len): a number, or "<word>_<number>". */
static gboolean
component_digits (const char *s,
                  gsize       len,
                  gsize      *d_start)
{
  gsize i = len;

  while (i > 0 && g_ascii_isdigit (s[i - 1]))
    i--;
  if (i == len || len - i > MAX_LAYER_DIGITS)
    return FALSE;
  if (i == 0 || (i >= 2 && s[i - 1] == '_'))
    {
      *d_start = i;
      return TRUE;
    }
  return FALSE;
}

typedef struct
{
  gsize start, end;                    /* digits span in the path */
  gboolean last;                       /* the component ends the path */
} Candidate;

/* Layer-index candidates of a path, from the last component backwards. */
static guint
layer_candidates (const char *path,
                  Candidate  *out)
{
  gsize len = strlen (path), end = len;
  guint n = 0;

  while (n < MAX_LAYER_CANDIDATES)
    {
      gssize sep = last_sep (path, end);
      gsize start = (gsize) (sep + 1), d;

      if (end > start && component_digits (path + start, end - start, &d))
        {
          out[n].start = start + d;
          out[n].end = end;
          out[n].last = end == len;
          n++;
        }
      if (sep < 0)
        break;
      end = (gsize) sep;
    }
  return n;
}

static char *
pattern_key (const char      *path,
             const Candidate *c)
{
  gsize len = strlen (path);
  GString *s = g_string_sized_new (len + 1);

  g_string_append_len (s, path, (gssize) c->start);
  g_string_append_c (s, '*');
  g_string_append (s, path + c->end);
  return g_string_free (s, FALSE);
}

/* Fills `infos` (dir -> LayerInfo*) for every key of `dirs` (a set of paths). */
static void
assign_layers (GHashTable *dirs)
{
  g_autoptr (GHashTable) counts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GHashTableIter it;
  gpointer key, value;

  g_hash_table_iter_init (&it, dirs);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      Candidate c[MAX_LAYER_CANDIDATES];
      guint n = layer_candidates (key, c);

      for (guint i = 0; i < n; i++)
        {
          char *k = pattern_key (key, &c[i]);
          gpointer old = NULL;

          if (g_hash_table_lookup_extended (counts, k, NULL, &old))
            {
              g_hash_table_insert (counts, k, GUINT_TO_POINTER (GPOINTER_TO_UINT (old) + 1));
            }
          else
            g_hash_table_insert (counts, k, GUINT_TO_POINTER (1));
        }
    }

  g_hash_table_iter_init (&it, dirs);
  while (g_hash_table_iter_next (&it, &key, &value))
    {
      Candidate c[MAX_LAYER_CANDIDATES];
      guint n = layer_candidates (key, c);
      LayerInfo *li = g_new0 (LayerInfo, 1);
      int chosen = -1;

      for (guint i = 0; i < n && chosen < 0; i++)
        {
          g_autofree char *k = pattern_key (key, &c[i]);
          if (GPOINTER_TO_UINT (g_hash_table_lookup (counts, k)) >= 2)
            chosen = (int) i;
        }
      if (chosen < 0 && n > 0 && c[0].last
          && (c[0].start == 0 || is_sep (((const char *) key)[c[0].start - 1])))
        chosen = 0;                    /* a number ending the path: a ModuleList index */
      if (chosen >= 0)
        {
          const char *k = key;
          li->layer = (int) g_ascii_strtoll (k + c[chosen].start, NULL, 10);
          li->star = (gssize) c[chosen].start;
          li->pattern = pattern_key (key, &c[chosen]);
        }
      else
        {
          li->layer = -1;
          li->star = -1;
          li->pattern = g_strdup (key);
        }
      g_hash_table_iter_replace (&it, li);
    }
}

/* The owner of a pattern: without a trailing "*" component, then without its
 * last component ("" at the root). */
static char *
owner_of (const char *pattern)
{
  gsize len = strlen (pattern);
  gssize sep;

  if (len >= 1 && pattern[len - 1] == '*' && (len == 1 || is_sep (pattern[len - 2])))
    len = len >= 2 ? len - 2 : 0;
  sep = last_sep (pattern, len);
  return sep >= 0 ? g_strndup (pattern, (gsize) sep) : g_strdup ("");
}

/* ---- geometry --------------------------------------------------------- */

static gboolean
unit_complete (const Unit *u)
{
  for (gsize s = 0; s < n_slots (u->method); s++)
    if (u->slot[s] == NULL)
      return FALSE;
  return TRUE;
}

/* Channels and filter sizes of a conv tensor, or FALSE. */
static gboolean
conv_geometry (gboolean         flax_kernel,
               const RpeTensor *t,
               gsize           *channels,
               gsize           *l1,
               gsize           *l2)
{
  if (flax_kernel)
    {
      if (t->ndim == 3 && t->shape[1] == 1)
        {
          *l1 = t->shape[0];
          *l2 = 0;
          *channels = t->shape[2];
          return TRUE;
        }
      if (t->ndim == 4 && t->shape[2] == 1)
        {
          *l1 = t->shape[0];
          *l2 = t->shape[1];
          *channels = t->shape[3];
          return TRUE;
        }
      return FALSE;
    }
  if ((t->ndim == 3 || t->ndim == 4) && t->shape[1] == 1)
    {
      *channels = t->shape[0];
      *l1 = t->shape[2];
      *l2 = t->ndim == 4 ? t->shape[3] : 0;
      return TRUE;
    }
  return FALSE;
}

static const Unit *
first_complete_unit (const Group *g)
{
  for (guint i = 0; i < g->units->len; i++)
    if (unit_complete (g_ptr_array_index (g->units, i)))
      return g_ptr_array_index (g->units, i);
  return NULL;
}

/* H*D of a group (0 if unknown) and, for sine, H and D. */
static gsize
group_channels (const Group *g,
                gsize       *h,
                gsize       *d)
{
  const Unit *u = first_complete_unit (g);
  gsize ch = 0, l1, l2;

  *h = *d = 0;
  if (u == NULL)
    return 0;
  if (g->method == RPE_SPE_SINE)
    {
      if (u->slot[0]->ndim != 3)
        return 0;
      *h = u->slot[0]->shape[0];
      *d = u->slot[0]->shape[1];
      return *h * *d;
    }
  if (!conv_geometry (u->flax_kernel, u->slot[0], &ch, &l1, &l2))
    return 0;
  return ch;
}

static gboolean
gate_fits (const Group     *g,
           const RpeTensor *gate)
{
  gsize h, d, ch = group_channels (g, &h, &d);

  if (gate->ndim != 2 || ch == 0)
    return FALSE;
  if (g->method == RPE_SPE_SINE)
    return gate->shape[0] == h && gate->shape[1] == d;
  return gate->shape[0] * gate->shape[1] == ch;
}

/* ---- discovery -------------------------------------------------------- */

static int
unit_layer_compare (gconstpointer a,
                    gconstpointer b)
{
  const Unit *x = *(Unit *const *) a, *y = *(Unit *const *) b;

  return x->layer < y->layer ? -1 : x->layer > y->layer;
}

static int
gate_layer_compare (gconstpointer a,
                    gconstpointer b)
{
  const GateUnit *x = *(GateUnit *const *) a, *y = *(GateUnit *const *) b;

  if (x->layer != y->layer)
    return x->layer < y->layer ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int
group_order (gconstpointer a,
             gconstpointer b)
{
  const Group *x = *(Group *const *) a, *y = *(Group *const *) b;

  return x->first_index < y->first_index ? -1 : x->first_index > y->first_index;
}

/* The memory discovery holds: charged as it goes (units and gates while scanning,
 * then an upper bound of the layer keys, patterns, groups and tables per path),
 * refused over the budget. */
static gboolean
charge (Discovery  *dv,
        gsize       bytes,
        GError    **error)
{
  RpeStatus st = RPE_ERROR_NO_MEMORY;

  if (!rpe_size_add (dv->charged, bytes, &dv->charged) || (st = rpe_budget_check (dv->charged)) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st);

      dv->over_budget = TRUE;
      return rpe_set_error (error, st, "Indexing the checkpoint's module names needs more than %s", limit);
    }
  return TRUE;
}

/* Per path: its layer candidates' keys and counts, its pattern, owner, prefix,
 * group and the hash table entries (with allocator overhead). */
static gsize
path_cost (const char *path)
{
  Candidate c[MAX_LAYER_CANDIDATES];
  gsize len = strlen (path), n = layer_candidates (path, c);

  return len * (6 + n) + 64 * n + 480;
}

static Unit *
get_unit (Discovery    *dv,
          GHashTable   *table,
          const char   *name,
          gsize         dir_len,
          RpeSpeMethod  method,
          gsize         index)
{
  g_autofree char *dir = g_strndup (name, dir_len);
  Unit *u = g_hash_table_lookup (table, dir);

  if (u == NULL)
    {
      if (!charge (dv, dir_len + 160, NULL))
        return NULL;
      u = g_new0 (Unit, 1);
      u->dir = g_steal_pointer (&dir);
      u->method = method;
      u->first_index = index;
      u->layer = -1;
      g_ptr_array_add (dv->units, u);
      g_hash_table_insert (table, u->dir, u);
    }
  return u;
}

static void
scan_tensor (Discovery       *dv,
             GHashTable      *sine_units,
             GHashTable      *conv_units,
             const RpeTensor *t,
             gsize            index)
{
  const char *name = t->name;
  gsize len = strlen (name);
  gssize sep = last_sep (name, len);
  const char *leaf = name + sep + 1;

  for (gsize s = 0; s < 3; s++)
    if (strcmp (leaf, sine_leaves[s]) == 0)
      {
        Unit *u = get_unit (dv, sine_units, name, sep >= 0 ? (gsize) sep : 0, RPE_SPE_SINE, index);
        if (u != NULL && u->slot[s] == NULL)
          u->slot[s] = t;
        return;
      }
  if (sep > 0 && (strcmp (leaf, "weight") == 0 || strcmp (leaf, "kernel") == 0))
    {
      gssize sep2 = last_sep (name, (gsize) sep);
      const char *conv = name + sep2 + 1;
      gsize conv_len = (gsize) sep - (gsize) (sep2 + 1);

      for (gsize s = 0; s < 2; s++)
        if (conv_len == 6 && strncmp (conv, s == 0 ? "conv_q" : "conv_k", 6) == 0)
          {
            Unit *u = get_unit (dv, conv_units, name, sep2 >= 0 ? (gsize) sep2 : 0, RPE_SPE_CONV, index);
            if (u != NULL && u->slot[s] == NULL)
              {
                u->slot[s] = t;
                u->flax_kernel = leaf[0] == 'k';
              }
            return;
          }
    }
  if (strcmp (leaf, "gate") == 0 && charge (dv, (sep >= 0 ? (gsize) sep : 0) + 160, NULL))
    {
      GateUnit *g = g_new0 (GateUnit, 1);

      g->tensor = t;
      g->dir = g_strndup (name, sep >= 0 ? (gsize) sep : 0);
      g->layer = -1;
      g->index = index;
      g_ptr_array_add (dv->gate_units, g);
    }
}

/* Pairs every filter with the code modules of its owner or nearest ancestor. */
static void
pair_filters (Discovery *dv)
{
  g_autoptr (GHashTable) by_owner =
    g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) g_ptr_array_unref);

  for (guint i = 0; i < dv->groups->len; i++)
    {
      Group *g = g_ptr_array_index (dv->groups, i);
      GPtrArray *list = g_hash_table_lookup (by_owner, g->owner);

      if (list == NULL)
        {
          list = g_ptr_array_new ();
          g_hash_table_insert (by_owner, g->owner, list);
        }
      g_ptr_array_add (list, g);
    }

  for (guint i = 0; i < dv->gate_groups->len; i++)
    {
      GateGroup *gg = g_ptr_array_index (dv->gate_groups, i);
      const RpeTensor *gate = ((GateUnit *) g_ptr_array_index (gg->gates, 0))->tensor;
      g_autofree char *buf = g_strdup (gg->owner);
      gsize len = strlen (buf);

      for (int level = 0; level < MAX_ANCESTOR_WALK; level++)
        {
          GPtrArray *list;
          gssize sep;

          buf[len] = '\0';
          list = g_hash_table_lookup (by_owner, buf);
          if (list != NULL)
            {
              for (guint j = 0; j < list->len; j++)
                if (gate_fits (g_ptr_array_index (list, j), gate))
                  g_ptr_array_add (gg->codes, g_ptr_array_index (list, j));
              /* a filter beside a lone module that it does not fit: paired anyway,
               * so that loading it reports the shape instead of dropping the gate
               * (further up, a gate of another shape belongs to something else) */
              if (gg->codes->len == 0 && list->len == 1 && level == 0)
                g_ptr_array_add (gg->codes, g_ptr_array_index (list, 0));
              if (gg->codes->len > 0)
                break;
            }
          if (len == 0)
            break;
          sep = last_sep (buf, len);
          len = sep >= 0 ? (gsize) sep : 0;
        }
      for (guint j = 0; j < gg->codes->len; j++)
        g_ptr_array_add (((Group *) g_ptr_array_index (gg->codes, j))->filters, gg);
    }
}

static Discovery *
discover (const RpeTensorSet *set,
          GError            **error)
{
  g_autoptr (Discovery) dv = NULL;
  g_autoptr (GHashTable) sine_units = NULL, conv_units = NULL, code_dirs = NULL, gate_dirs = NULL;
  g_autoptr (GHashTable) groups = NULL, gate_groups = NULL, owner_count = NULL;

  dv = g_new0 (Discovery, 1);
  dv->units = g_ptr_array_new_with_free_func (unit_free);
  dv->gate_units = g_ptr_array_new_with_free_func (gate_unit_free);
  dv->groups = g_ptr_array_new_with_free_func (group_free);
  dv->gate_groups = g_ptr_array_new_with_free_func (gate_group_free);

  sine_units = g_hash_table_new (g_str_hash, g_str_equal);
  conv_units = g_hash_table_new (g_str_hash, g_str_equal);
  for (gsize i = 0; i < rpe_tensor_set_size (set) && !dv->over_budget; i++)
    scan_tensor (dv, sine_units, conv_units, rpe_tensor_set_get (set, i), i);
  if (dv->over_budget)
    {
      charge (dv, G_MAXSIZE, error);
      return NULL;
    }
  for (guint i = 0; i < dv->units->len; i++)
    if (!charge (dv, path_cost (((Unit *) g_ptr_array_index (dv->units, i))->dir), error))
      return NULL;
  for (guint i = 0; i < dv->gate_units->len; i++)
    if (!charge (dv, path_cost (((GateUnit *) g_ptr_array_index (dv->gate_units, i))->dir), error))
      return NULL;

  /* layers: over the code dirs (both methods together), and over the gate dirs */
  code_dirs = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, layer_info_free);
  for (guint i = 0; i < dv->units->len; i++)
    g_hash_table_insert (code_dirs, ((Unit *) g_ptr_array_index (dv->units, i))->dir, NULL);
  assign_layers (code_dirs);
  gate_dirs = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, layer_info_free);
  for (guint i = 0; i < dv->gate_units->len; i++)
    g_hash_table_insert (gate_dirs, ((GateUnit *) g_ptr_array_index (dv->gate_units, i))->dir, NULL);
  assign_layers (gate_dirs);

  /* code groups: one per (pattern, method) */
  groups = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < dv->units->len; i++)
    {
      Unit *u = g_ptr_array_index (dv->units, i);
      const LayerInfo *li = g_hash_table_lookup (code_dirs, u->dir);
      char *key = g_strdup_printf ("%c%s", u->method == RPE_SPE_SINE ? 's' : 'c', li->pattern);
      Group *g = g_hash_table_lookup (groups, key);

      if (g == NULL)
        {
          g = g_new0 (Group, 1);
          g->pattern = g_strdup (li->pattern);
          g->owner = owner_of (li->pattern);
          g->method = u->method;
          g->layered = li->layer >= 0;
          g->star = li->star;
          g->first_index = u->first_index;
          g->units = g_ptr_array_new ();
          g->filters = g_ptr_array_new ();
          g_ptr_array_add (dv->groups, g);
          g_hash_table_insert (groups, key, g);
        }
      else
        g_free (key);
      u->layer = li->layer;
      u->group = g;
      g->first_index = MIN (g->first_index, u->first_index);
      for (gsize k = 0; k < n_slots (u->method); k++)
        if (u->flax_kernel || (u->slot[k] != NULL && name_is_flax (u->slot[k]->name)))
          g->flax = TRUE;
      g_ptr_array_add (g->units, u);
    }
  for (guint i = 0; i < dv->groups->len; i++)
    g_ptr_array_sort (((Group *) g_ptr_array_index (dv->groups, i))->units, unit_layer_compare);
  g_ptr_array_sort (dv->groups, group_order);

  /* filters: one per gate pattern */
  gate_groups = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < dv->gate_units->len; i++)
    {
      GateUnit *gu = g_ptr_array_index (dv->gate_units, i);
      const LayerInfo *li = g_hash_table_lookup (gate_dirs, gu->dir);
      GateGroup *gg = g_hash_table_lookup (gate_groups, li->pattern);

      if (gg == NULL)
        {
          gg = g_new0 (GateGroup, 1);
          gg->pattern = g_strdup (li->pattern);
          gg->owner = owner_of (li->pattern);
          gg->layered = li->layer >= 0;
          gg->star = li->star;
          gg->first_index = gu->index;
          gg->gates = g_ptr_array_new ();
          gg->codes = g_ptr_array_new ();
          g_ptr_array_add (dv->gate_groups, gg);
          g_hash_table_insert (gate_groups, gg->pattern, gg);
        }
      gu->layer = li->layer;
      gu->group = gg;
      if (name_is_flax (gu->tensor->name))
        gg->flax = TRUE;
      g_ptr_array_add (gg->gates, gu);
    }
  for (guint i = 0; i < dv->gate_groups->len; i++)
    g_ptr_array_sort (((GateGroup *) g_ptr_array_index (dv->gate_groups, i))->gates, gate_layer_compare);

  dv->sine_by_owner = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < dv->groups->len; i++)
    {
      Group *g = g_ptr_array_index (dv->groups, i);
      if (g->method == RPE_SPE_SINE && !g_hash_table_contains (dv->sine_by_owner, g->owner))
        g_hash_table_insert (dv->sine_by_owner, g->owner, g);
    }
  pair_filters (dv);
  /* a module read the Flax way by its gates' names too (its own filters only) */
  for (guint i = 0; i < dv->gate_groups->len; i++)
    {
      GateGroup *gg = g_ptr_array_index (dv->gate_groups, i);

      for (guint j = 0; gg->flax && j < gg->codes->len; j++)
        ((Group *) g_ptr_array_index (gg->codes, j))->flax = TRUE;
    }

  /* display prefixes */
  owner_count = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < dv->groups->len; i++)
    {
      Group *g = g_ptr_array_index (dv->groups, i);
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (owner_count, g->owner));
      g_hash_table_insert (owner_count, g->owner, GUINT_TO_POINTER (n + 1));
    }
  for (guint i = 0; i < dv->groups->len; i++)
    {
      Group *g = g_ptr_array_index (dv->groups, i);
      gboolean unique = GPOINTER_TO_UINT (g_hash_table_lookup (owner_count, g->owner)) == 1;

      g->prefix = g_strdup (!g->flax && unique && g->owner[0] != '\0' ? g->owner : g->pattern);
    }
  return g_steal_pointer (&dv);
}

/* H and D of conv channels: from the gate, else a sine module with the same
 * owner, else (1, channels). */
static void
conv_heads (const Discovery *dv,
            const Group     *g,
            const RpeTensor *gate,
            gsize            channels,
            gsize           *h,
            gsize           *d)
{
  const Group *sine;

  if (gate == NULL && g != NULL && g->filters->len > 0)
    gate = ((GateUnit *) g_ptr_array_index (((GateGroup *) g_ptr_array_index (g->filters, 0))->gates, 0))->tensor;
  if (gate != NULL && gate->ndim == 2 && channels > 0 && gate->shape[0] * gate->shape[1] == channels)
    {
      *h = gate->shape[0];
      *d = gate->shape[1];
      return;
    }
  if (g != NULL && (sine = g_hash_table_lookup (dv->sine_by_owner, g->owner)) != NULL)
    {
      gsize sh, sd;
      if (group_channels (sine, &sh, &sd) == channels && channels > 0)
        {
          *h = sh;
          *d = sd;
          return;
        }
    }
  *h = 1;
  *d = channels;
}

/* Ends a list of `total` items of which the first LIST_MAX were written: a
 * message names a few and counts the rest (a file of 65536 modules must not
 * make a note of megabytes). */
static void
list_end (GString *s,
          guint    total)
{
  if (total > LIST_MAX)
    g_string_append_printf (s, " and %u more", total - LIST_MAX);
}

/* "'m.spe_filters.*.gate' (layers 0, 1)" */
static char *
filter_description (const GateGroup *gg)
{
  const GateUnit *first = g_ptr_array_index (gg->gates, 0);
  gsize dir_len = strlen (first->dir);
  GString *s = g_string_new ("'");

  g_string_append (s, gg->pattern);
  g_string_append (s, first->tensor->name + dir_len);
  g_string_append_c (s, '\'');
  if (gg->layered)
    {
      g_string_append (s, gg->gates->len > 1 ? " (layers " : " (layer ");
      for (guint i = 0; i < gg->gates->len && i < LIST_MAX; i++)
        g_string_append_printf (s, "%s%d", i > 0 ? ", " : "", ((GateUnit *) g_ptr_array_index (gg->gates, i))->layer);
      list_end (s, gg->gates->len);
      g_string_append_c (s, ')');
    }
  return g_string_free (s, FALSE);
}

static const char *
method_name (RpeSpeMethod m)
{
  return m == RPE_SPE_SINE ? "sine" : "conv";
}

/* Why a module's gate needs a choice, or NULL. */
static char *
pairing_problem (const Group *g)
{
  GString *s;

  if (g->filters->len > 1)
    {
      s = g_string_new (NULL);
      g_string_append_printf (s, "'%s' is paired with %u filters: ", g->prefix, g->filters->len);
      for (guint i = 0; i < g->filters->len && i < LIST_MAX; i++)
        {
          g_autofree char *d = filter_description (g_ptr_array_index (g->filters, i));
          g_string_append_printf (s, "%s%s", i > 0 ? ", " : "", d);
        }
      list_end (s, g->filters->len);
      return g_string_free (s, FALSE);
    }
  if (g->filters->len == 1)
    {
      const GateGroup *gg = g_ptr_array_index (g->filters, 0);
      g_autofree char *d = NULL;

      if (gg->codes->len <= 1)
        return NULL;
      d = filter_description (gg);
      s = g_string_new (NULL);
      g_string_append_printf (s, "the filter %s could belong to ", d);
      for (guint i = 0; i < gg->codes->len && i < LIST_MAX; i++)
        {
          const Group *o = g_ptr_array_index (gg->codes, i);
          g_string_append_printf (s, "%s'%s' (%s)", i == 0 ? "" : i + 1 == gg->codes->len ? " or " : ", ",
                                  o->prefix, method_name (o->method));
        }
      list_end (s, gg->codes->len);
      return g_string_free (s, FALSE);
    }
  return NULL;
}

void
rpe_spe_module_info_free (RpeSpeModuleInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->prefix);
  if (info->layers != NULL)
    g_array_unref (info->layers);
  g_free (info->convention);
  g_free (info->code_name);
  if (info->gates != NULL)
    g_ptr_array_unref (info->gates);
  if (info->gate_layers != NULL)
    g_array_unref (info->gate_layers);
  g_free (info->pairing_note);
  g_free (info);
}

GPtrArray *
rpe_checkpoint_discover (const RpeTensorSet  *set,
                         GPtrArray          **unpaired,
                         GError             **error)
{
  g_autoptr (Discovery) dv = discover (set, error);
  GPtrArray *out;

  if (unpaired != NULL)
    *unpaired = NULL;
  if (dv == NULL)
    return NULL;
  out = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_spe_module_info_free);
  for (guint i = 0; i < dv->groups->len; i++)
    {
      const Group *g = g_ptr_array_index (dv->groups, i);
      const Unit *u = first_complete_unit (g);
      RpeSpeModuleInfo *info;
      gsize h, d, size, size2 = 0;

      if (u == NULL)
        continue;
      if (g->method == RPE_SPE_SINE)
        {
          const RpeTensor *f = u->slot[0];
          if (f->ndim != 3)
            continue;
          h = f->shape[0];
          d = f->shape[1];
          size = f->shape[2];
        }
      else
        {
          gsize channels;
          if (!conv_geometry (u->flax_kernel, u->slot[0], &channels, &size, &size2))
            continue;
          conv_heads (dv, g, NULL, channels, &h, &d);
        }
      info = g_new0 (RpeSpeModuleInfo, 1);
      info->prefix = g_strdup (g->prefix);
      info->method = g->method;
      info->n_heads = h;
      info->n_features = d;
      info->size = size;
      info->size2 = size2;
      info->convention = g_strdup_printf ("%s%s", g->flax ? "flax" : "pytorch", g->layered ? "-unshared" : "");
      info->code_name = g_strdup (u->slot[0]->name);
      info->layers = g_array_new (FALSE, FALSE, sizeof (int));
      info->gates = g_ptr_array_new_with_free_func (g_free);
      info->gate_layers = g_array_new (FALSE, FALSE, sizeof (int));
      if (g->layered)
        {
          for (guint j = 0; j < g->units->len; j++)
            if (unit_complete (g_ptr_array_index (g->units, j)))
              g_array_append_val (info->layers, ((Unit *) g_ptr_array_index (g->units, j))->layer);
        }
      else if (g->filters->len == 1 && ((GateGroup *) g_ptr_array_index (g->filters, 0))->layered)
        {
          const GateGroup *gg = g_ptr_array_index (g->filters, 0);
          for (guint j = 0; j < gg->gates->len; j++)
            g_array_append_val (info->layers, ((GateUnit *) g_ptr_array_index (gg->gates, j))->layer);
        }
      for (guint f = 0; f < g->filters->len; f++)
        {
          const GateGroup *gg = g_ptr_array_index (g->filters, f);
          for (guint j = 0; j < gg->gates->len; j++)
            {
              const GateUnit *gu = g_ptr_array_index (gg->gates, j);
              g_ptr_array_add (info->gates, g_strdup (gu->tensor->name));
              g_array_append_val (info->gate_layers, gu->layer);
            }
        }
      info->pairing_note = pairing_problem (g);
      g_ptr_array_add (out, info);
    }
  if (unpaired != NULL)
    {
      *unpaired = g_ptr_array_new_with_free_func (g_free);
      for (guint i = 0; i < dv->gate_units->len; i++)
        {
          const GateUnit *gu = g_ptr_array_index (dv->gate_units, i);
          if (gu->group->codes->len == 0)
            g_ptr_array_add (*unpaired, g_strdup (gu->tensor->name));
        }
    }
  return out;
}

GPtrArray *
rpe_checkpoint_find_modules (const RpeTensorSet *set)
{
  GPtrArray *out = rpe_checkpoint_discover (set, NULL, NULL);

  return out != NULL ? out : g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_spe_module_info_free);
}

/* ---- loading ---------------------------------------------------------- */

static double
sigmoid (double x)
{
  if (x >= 0)
    return 1.0 / (1.0 + exp (-x));
  else
    {
      double e = exp (x);
      return e / (1.0 + e);
    }
}

/* log(1 + e^x) without overflow or cancellation */
static double
softplus (double x)
{
  if (x > 0)
    return x + log1p (exp (-x));
  return log1p (exp (x));
}

/* The name a missing slot would have, after the unit's dir. */
static char *
slot_name (const Unit *u,
           gsize       slot)
{
  const char *sep = strchr (u->dir, '/') != NULL ? "/" : ".";
  const char *leaf;

  if (u->method == RPE_SPE_SINE)
    leaf = sine_leaves[slot];
  else if (u->flax_kernel)
    leaf = slot == 0 ? "conv_q/kernel" : "conv_k/kernel";
  else
    leaf = slot == 0 ? "conv_q.weight" : "conv_k.weight";
  if (u->dir[0] == '\0')
    return g_strdup (leaf);
  if (strcmp (sep, "/") == 0 || u->flax_kernel)
    {
      g_autofree char *l = g_strdup (leaf);
      if (strcmp (sep, ".") == 0)
        g_strdelimit (l, "/", '.');
      return g_strdup_printf ("%s%s%s", u->dir, sep, l);
    }
  return g_strdup_printf ("%s.%s", u->dir, leaf);
}

static gboolean
missing_error (const Unit       *u,
               const char       *module,
               const RpeTensor **slot,
               GError          **error)
{
  GString *missing = g_string_new (NULL), *found = g_string_new (NULL);
  gsize n_missing = 0;

  for (gsize s = 0; s < n_slots (u->method); s++)
    {
      g_autofree char *name = slot[s] != NULL ? g_strdup (slot[s]->name) : slot_name (u, s);
      GString *which = slot[s] == NULL ? missing : found;

      n_missing += slot[s] == NULL;
      g_string_append_printf (which, "%s'%s'", which->len > 0 ? ", " : "", name);
    }
  if (found->len > 0)
    {
      g_string_prepend (found, " (found ");
      g_string_append_c (found, ')');
    }
  rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                 "The %s SPE module '%s' is incomplete: %s %s missing%s",
                 method_name (u->method), module, missing->str,
                 n_missing > 1 ? "are" : "is", found->str);
  g_string_free (missing, TRUE);
  g_string_free (found, TRUE);
  return FALSE;
}

static gboolean
shape_error (const RpeTensor *t,
             const char      *expected,
             GError         **error)
{
  g_autofree char *shape = rpe_tensor_shape_string (t);

  return rpe_set_error (error, RPE_ERROR_FORMAT, "Tensor '%s' has shape %s; expected %s",
                        t->name, shape, expected);
}

static gboolean
same_shape (const RpeTensor *a,
            const RpeTensor *b)
{
  if (a->ndim != b->ndim)
    return FALSE;
  for (gsize i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i])
      return FALSE;
  return TRUE;
}

static char *
module_list (const Discovery *dv,
             int              method)
{
  GString *s = g_string_new (NULL);
  guint n = 0;

  for (guint i = 0; i < dv->groups->len; i++)
    {
      const Group *g = g_ptr_array_index (dv->groups, i);
      if ((method < 0 || (int) g->method == method) && n++ < LIST_MAX)
        g_string_append_printf (s, "%s'%s' (%s)", s->len > 0 ? ", " : "", g->prefix, method_name (g->method));
    }
  if (s->len == 0)
    g_string_append (s, "none");
  list_end (s, n);
  return g_string_free (s, FALSE);
}

static char *
unit_layers (const Group *g)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < g->units->len && i < LIST_MAX; i++)
    g_string_append_printf (s, "%s%d", i > 0 ? ", " : "", ((Unit *) g_ptr_array_index (g->units, i))->layer);
  list_end (s, g->units->len);
  return g_string_free (s, FALSE);
}

static char *
gate_layers (const GateGroup *gg)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < gg->gates->len && i < LIST_MAX; i++)
    g_string_append_printf (s, "%s%d", i > 0 ? ", " : "", ((GateUnit *) g_ptr_array_index (gg->gates, i))->layer);
  list_end (s, gg->gates->len);
  return g_string_free (s, FALSE);
}

/* `s` (the group's pattern, owner or prefix) for one layer: its '*' at the
 * pattern's layer position replaced by the digits of that layer's path `dir`.
 * NULL if `s` has no wildcard there. */
static char *
concrete (const Group *g,
          const char  *s,
          const char  *dir)
{
  gsize star, plen = strlen (g->pattern), dlen = strlen (dir), slen = strlen (s), digits;

  if (!g->layered || g->star < 0)
    return NULL;
  star = (gsize) g->star;
  if (slen <= star || s[star] != '*' || strncmp (s, g->pattern, star) != 0 || dlen + 1 < plen)
    return NULL;
  digits = dlen + 1 - plen;
  return g_strdup_printf ("%.*s%.*s%s", (int) star, s, (int) digits, dir + star, s + star + 1);
}

/* Whether `p` is `path` or a whole-component beginning of it ("a.b" of "a.b.c"). */
static gboolean
component_prefix (const char *p,
                  const char *path,
                  gboolean    exact)
{
  gsize n = strlen (p);

  if (strncmp (p, path, n) != 0)
    return FALSE;
  return path[n] == '\0' || (!exact && n > 0 && is_sep (path[n]));
}

/* Whether `p` names group g, and how well.  Exact (2): p is the group's
 * prefix, pattern or owner, or one of these for one layer (the layer's own
 * path: *layer receives the layer).  Above (1): p is a path above the group's
 * code or its per-layer gates, whole components ("layers" of
 * "layers.*.attn.spe"; "layers.1" of its layer 1, which picks that layer).
 * 0: no match.  Each with or without a module./model. wrapper (either way:
 * the name may have one the file has not, or lack one it has). */
static int
prefix_matches (const Group *g,
                const char  *p,
                int         *layer)
{
  static const char *const wrappers[] = { "", "module.", "model.", "module/", "model/" };
  gsize n_wrappers = G_N_ELEMENTS (wrappers);

  for (int exact = 1; exact >= 0; exact--)
    for (gsize w = 0; w < 2 * n_wrappers; w++)
      {
        /* p with a wrapper the file has, or without one the file has not */
        g_autofree char *cand = w < n_wrappers ? g_strconcat (wrappers[w], p, NULL)
                                : g_str_has_prefix (p, wrappers[w - n_wrappers]) && w > n_wrappers
                                ? g_strdup (p + strlen (wrappers[w - n_wrappers])) : NULL;
        const char *whole[3] = { g->prefix, g->pattern, g->owner };

        if (cand == NULL)
          continue;

        if (cand[0] == '\0')
          continue;
        for (int k = 0; k < 3; k++)
          if (whole[k][0] != '\0' && component_prefix (cand, whole[k], exact))
            {
              /* a path above the layer wildcard names every layer */
              if (exact || g->star < 0 || strlen (cand) <= (gsize) g->star)
                {
                  *layer = -1;
                  return exact ? 2 : 1;
                }
            }
        /* one layer's code */
        for (guint i = 0; g->layered && i < g->units->len; i++)
          {
            const Unit *u = g_ptr_array_index (g->units, i);

            for (int k = 0; k < 3; k++)
              {
                g_autofree char *c = concrete (g, whole[k], u->dir);

                if (c != NULL && c[0] != '\0' && component_prefix (cand, c, exact)
                    && strlen (cand) > (gsize) g->star)
                  {
                    *layer = u->layer;
                    return exact ? 2 : 1;
                  }
              }
          }
        /* one layer's gate, of a code shared by every layer */
        for (guint f = 0; !g->layered && f < g->filters->len; f++)
          {
            const GateGroup *gg = g_ptr_array_index (g->filters, f);

            for (guint i = 0; gg->layered && gg->star >= 0 && i < gg->gates->len; i++)
              {
                const GateUnit *gu = g_ptr_array_index (gg->gates, i);

                if (component_prefix (cand, gu->dir, exact) && strlen (cand) > (gsize) gg->star)
                  {
                    *layer = gu->layer;
                    return exact ? 2 : 1;
                  }
              }
          }
      }
  return 0;
}

static gboolean
gate_fits_hd (const RpeTensor *gate,
              RpeSpeMethod     method,
              gsize            h,
              gsize            d)
{
  if (gate->ndim != 2)
    return FALSE;
  if (method == RPE_SPE_SINE)
    return gate->shape[0] == h && gate->shape[1] == d;
  return gate->shape[0] * gate->shape[1] == h * d;
}

/* Names of the groups, NULL-terminated (for candidates). */
static GPtrArray *
group_names (const Discovery *dv,
             int              method,
             gboolean         patterns)
{
  GPtrArray *a = g_ptr_array_new_null_terminated (dv->groups->len, NULL, TRUE);

  for (guint i = 0; i < dv->groups->len; i++)
    {
      const Group *g = g_ptr_array_index (dv->groups, i);

      if (method < 0 || (int) g->method == method)
        g_ptr_array_add (a, patterns ? g->pattern : g->prefix);
    }
  return a;
}

/* The layers of a group (or of a filter) as text candidates, NULL-terminated. */
static GPtrArray *
layer_names (const GPtrArray *units,
             gboolean         gates)
{
  GPtrArray *a = g_ptr_array_new_null_terminated (units->len, g_free, TRUE);

  for (guint i = 0; i < units->len; i++)
    g_ptr_array_add (a, g_strdup_printf ("%d", gates ? ((GateUnit *) g_ptr_array_index (units, i))->layer
                                                     : ((Unit *) g_ptr_array_index (units, i))->layer));
  return a;
}

static void
add_finding (GPtrArray *findings,
             RpeFinding *f)
{
  g_ptr_array_add (findings, f);
}

gboolean
rpe_checkpoint_load_spe_full (const RpeTensorSet    *set,
                              const RpeSpeSelection *selection,
                              RpeSpeParams          *params,
                              char                 **note,
                              GError               **error)
{
  g_autoptr (GPtrArray) findings = NULL;
  gboolean ok = rpe_checkpoint_load_spe_findings (set, selection, params, &findings, error);

  if (note != NULL)
    *note = ok ? rpe_findings_to_note (findings) : NULL;
  return ok;
}

char *
rpe_findings_to_note (const GPtrArray *findings)
{
  GString *s;

  if (findings == NULL || findings->len == 0)
    return NULL;
  s = g_string_new (NULL);
  for (guint i = 0; i < findings->len; i++)
    {
      g_autofree char *m = rpe_finding_to_message (g_ptr_array_index (findings, i));

      g_string_append_printf (s, "%s%s.", i > 0 ? "\n" : "", m);
    }
  return g_string_free (s, FALSE);
}

gboolean
rpe_checkpoint_load_spe_findings (const RpeTensorSet    *set,
                                  const RpeSpeSelection *selection,
                                  RpeSpeParams          *params,
                                  GPtrArray            **findings_out,
                                  GError               **error)
{
  static const RpeSpeSelection defaults = RPE_SPE_SELECTION_INIT;
  const RpeSpeSelection *sel = selection != NULL ? selection : &defaults;
  const RpeTensorMap *map = sel->map;
  g_autoptr (Discovery) dv = NULL;
  g_autoptr (GPtrArray) findings = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_finding_free);
  const RpeTensor *mapped[RPE_ROLE_GATE + 1] = { NULL };
  const RpeTensor *slot[3] = { NULL };
  const RpeTensor *gate = NULL;
  const Group *g = NULL;
  const Unit *u = NULL;
  Unit mapped_unit = { 0 };
  g_autofree char *module = NULL;
  gboolean map_sine, map_conv, map_complete = FALSE;
  int method = sel->method, layer = sel->layer, prefix_layer = -1;
  RpeSpeMethod m;
  gboolean flax_kernel, flax = FALSE;
  gsize h, d, size, size2 = 0, channels = 0, count;
  RpeStatus st;

  memset (params, 0, sizeof *params);
  if (findings_out != NULL)
    *findings_out = NULL;
  if ((dv = discover (set, error)) == NULL)
    return FALSE;

  /* the explicit map */
  map_sine = rpe_tensor_map_has_any (map, RPE_ROLE_SINE_FREQS, RPE_ROLE_SINE_GAINS);
  map_conv = rpe_tensor_map_has_any (map, RPE_ROLE_CONV_Q, RPE_ROLE_CONV_K);
  if (map_sine && map_conv)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "The roles assigned to tensors are both sine (freqs/offsets/gains) and conv "
                          "(conv_q/conv_k) roles; one module is loaded at a time");
  for (int r = 0; r <= RPE_ROLE_GATE; r++)
    {
      const char *name = rpe_tensor_map_get (map, (RpeRole) r);
      if (name != NULL && (mapped[r] = rpe_tensor_set_lookup (set, name)) == NULL)
        return rpe_set_error_finding (error, RPE_ERROR_NOT_FOUND, RPE_FINDING_TENSOR,
                                      (const char *const[]) { name, NULL },
                                      "The role %s is assigned to '%s', but the checkpoint has no tensor '%s'",
                                      rpe_role_to_string ((RpeRole) r), name, name);
    }
  if (map_sine || map_conv)
    {
      int want = map_sine ? RPE_SPE_SINE : RPE_SPE_CONV;
      if (method >= 0 && method != want)
        return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                              "The roles assigned to tensors are %s roles, but the %s method was asked for",
                              method_name (want), method_name (method));
      method = want;
      map_complete = map_sine ? (mapped[0] && mapped[1] && mapped[2]) : (mapped[3] && mapped[4]);
    }

  if (map_complete)
    {
      /* the mapped tensors form the module; if they are one discovered module,
       * its filters come with it */
      m = (RpeSpeMethod) method;
      for (gsize s = 0; s < n_slots (m); s++)
        slot[s] = mapped[(m == RPE_SPE_SINE ? RPE_ROLE_SINE_FREQS : RPE_ROLE_CONV_Q) + s];
      /* the discovered module(s) holding the mapped tensors: if they are all of
       * one module (in any roles), its filters still apply */
      {
        const Group *owner = NULL;
        gboolean one_group = TRUE;

        for (gsize s = 0; s < n_slots (m) && one_group; s++)
          {
            const Unit *holder = NULL;
            for (guint i = 0; i < dv->units->len && holder == NULL; i++)
              {
                const Unit *o = g_ptr_array_index (dv->units, i);
                for (gsize k = 0; k < 3; k++)
                  if (o->slot[k] == slot[s])
                    holder = o;
              }
            if (holder == NULL || (owner != NULL && holder->group != owner))
              one_group = FALSE;
            else
              {
                owner = holder->group;
                if (u == NULL)
                  u = holder;
              }
          }
        if (!one_group || owner == NULL || owner->method != m)
          u = NULL;
      }
      if (u != NULL)
        {
          g = u->group;
          flax_kernel = u->flax_kernel;
        }
      else
        {
          /* tensors that form no discovered module: their own names say how they are laid out */
          for (gsize s = 0; s < n_slots (m); s++)
            flax |= name_is_flax (slot[s]->name);
          mapped_unit.dir = (char *) "";
          mapped_unit.method = m;
          mapped_unit.flax_kernel = m == RPE_SPE_CONV && flax;
          mapped_unit.layer = -1;
          u = &mapped_unit;
          flax_kernel = mapped_unit.flax_kernel;
        }
      module = u == &mapped_unit ? g_strdup ("(mapped tensors)") : g_strdup (g->prefix);
    }
  else
    {
      /* the module */
      guint n_complete = 0;

      if (sel->prefix != NULL)
        {
          GPtrArray *matches = g_ptr_array_new ();
          int best = 0;

          /* the exact matches, else the paths above a module */
          for (guint i = 0; i < dv->groups->len; i++)
            {
              const Group *o = g_ptr_array_index (dv->groups, i);
              int l = -1, how;

              if ((method >= 0 && (int) o->method != method) || (how = prefix_matches (o, sel->prefix, &l)) == 0
                  || how < best)
                continue;
              if (how > best)
                {
                  g_ptr_array_set_size (matches, 0);
                  best = how;
                }
              g_ptr_array_add (matches, (gpointer) o);
              prefix_layer = l;
            }
          if (matches->len == 1)
            g = g_ptr_array_index (matches, 0);
          else if (matches->len > 1)
            {
              GString *s = g_string_new (NULL);
              for (guint i = 0; i < matches->len && i < LIST_MAX; i++)
                {
                  const Group *o = g_ptr_array_index (matches, i);
                  g_string_append_printf (s, "%s'%s' (%s)", i > 0 ? ", " : "", o->pattern, method_name (o->method));
                }
              list_end (s, matches->len);
              g_autoptr (GPtrArray) names = g_ptr_array_new_null_terminated (matches->len, NULL, TRUE);

              for (guint i = 0; i < matches->len; i++)
                g_ptr_array_add (names, ((const Group *) g_ptr_array_index (matches, i))->pattern);
              rpe_set_error_finding (error, RPE_ERROR_INVALID_ARGUMENT, RPE_FINDING_MODULE_METHOD,
                                     (const char *const *) names->pdata,
                                     "The prefix '%s' names %u SPE modules: %s", sel->prefix, matches->len, s->str);
              g_string_free (s, TRUE);
              g_ptr_array_unref (matches);
              return FALSE;
            }
          g_ptr_array_unref (matches);
          if (g == NULL)
            {
              g_autofree char *list = module_list (dv, method);
              return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                                    "No %sSPE module with prefix '%s' (found: %s)",
                                    method == RPE_SPE_SINE ? "sine " : method == RPE_SPE_CONV ? "conv " : "",
                                    sel->prefix, list);
            }
        }
      else
        {
          for (guint i = 0; i < dv->groups->len; i++)
            {
              const Group *o = g_ptr_array_index (dv->groups, i);
              if ((method >= 0 && (int) o->method != method) || first_complete_unit (o) == NULL)
                continue;
              if (g == NULL)
                g = o;
              n_complete++;
            }
          for (guint i = 0; i < dv->groups->len && g == NULL; i++)
            {
              const Group *o = g_ptr_array_index (dv->groups, i);
              if (method < 0 || (int) o->method == method)
                g = o;
            }
          if (g == NULL)
            {
              if (method >= 0 && dv->groups->len > 0)
                {
                  g_autofree char *list = module_list (dv, -1);
                  return rpe_set_error (error, RPE_ERROR_NOT_FOUND, "No %s SPE module in the checkpoint (found: %s)",
                                        method_name (method), list);
                }
              return rpe_set_error_finding (error, RPE_ERROR_NOT_FOUND, RPE_FINDING_ROLES, NULL,
                                            "No SPE module found: no tensors named '<module>.freqs|offsets|gains', "
                                            "'<module>.conv_q.weight|conv_k.weight' or "
                                            "'<module>/conv_q/kernel|conv_k/kernel'");
            }
          if (n_complete > 1)
            {
              g_autofree char *list = module_list (dv, method);
              g_autoptr (GPtrArray) names = group_names (dv, method, FALSE);

              add_finding (findings, rpe_finding_new (RPE_FINDING_MODULE, (const char *const *) names->pdata,
                                                      "Using the SPE module '%s' (%s) of %s", g->prefix,
                                                      method_name (g->method), list));
            }
        }
      module = g_strdup (g->prefix);

      /* the code: one per layer when unshared */
      if (prefix_layer >= 0)
        {
          if (layer >= 0 && layer != prefix_layer)
            return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                  "'%s' is layer %d's module, but layer %d was asked for",
                                  sel->prefix, prefix_layer, layer);
          layer = prefix_layer;
        }
      if (g->layered)
        {
          for (guint i = 0; i < g->units->len && u == NULL; i++)
            {
              const Unit *o = g_ptr_array_index (g->units, i);
              if (layer >= 0 ? o->layer == layer : unit_complete (o))
                u = o;
            }
          if (u == NULL && layer < 0)
            u = g_ptr_array_index (g->units, 0);
          if (u == NULL)
            {
              g_autofree char *list = unit_layers (g);
              return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                                    "The SPE module '%s' has no parameters for layer %d (layers: %s)",
                                    g->prefix, layer, list);
            }
          if (layer < 0 && g->units->len > 1)
            {
              g_autofree char *list = unit_layers (g);
              g_autoptr (GPtrArray) layers = layer_names (g->units, FALSE);

              add_finding (findings, rpe_finding_new (RPE_FINDING_LAYER, (const char *const *) layers->pdata,
                                                      "'%s' has one code per layer (layers %s); using layer %d's",
                                                      g->prefix, list, u->layer));
            }
        }
      else
        u = g_ptr_array_index (g->units, 0);
      m = g->method;
      flax_kernel = u->flax_kernel;
      for (gsize s = 0; s < n_slots (m); s++)
        {
          const RpeTensor *over = mapped[(m == RPE_SPE_SINE ? RPE_ROLE_SINE_FREQS : RPE_ROLE_CONV_Q) + s];
          slot[s] = over != NULL ? over : u->slot[s];
        }
    }
  for (gsize s = 0; s < n_slots (m); s++)
    if (slot[s] == NULL)
      return missing_error (u, module, slot, error);

  /* shapes */
  if (m == RPE_SPE_SINE)
    {
      const RpeTensor *f = slot[0];

      if (f->ndim != 3 || f->n_elements == 0)
        return shape_error (f, "(H, D, K) with no empty dimension", error);
      for (gsize s = 1; s < 3; s++)
        if (!same_shape (slot[s], f))
          {
            g_autofree char *fs = rpe_tensor_shape_string (f);
            g_autofree char *want = g_strdup_printf ("%s like '%s'", fs, f->name);
            return shape_error (slot[s], want, error);
          }
      h = f->shape[0];
      d = f->shape[1];
      size = f->shape[2];
    }
  else
    {
      const RpeTensor *q = slot[0];

      if (!conv_geometry (flax_kernel, q, &channels, &size, &size2) || q->n_elements == 0)
        return shape_error (q, flax_kernel ? "(L, 1, H*D) or (L1, L2, 1, H*D)" : "(H*D, 1, L) or (H*D, 1, L1, L2)", error);
      if (!same_shape (slot[1], q))
        {
          g_autofree char *qs = rpe_tensor_shape_string (q);
          g_autofree char *want = g_strdup_printf ("%s like '%s'", qs, q->name);
          return shape_error (slot[1], want, error);
        }
      h = 1;
      d = channels;
    }

  /* the gate */
  if (sel->no_gate)
    gate = NULL;
  else if (mapped[RPE_ROLE_GATE] != NULL)
    gate = mapped[RPE_ROLE_GATE];
  else if (g != NULL && g->filters->len > 0)
    {
      g_autofree char *problem = pairing_problem (g);
      const GateGroup *gg = g_ptr_array_index (g->filters, 0);

      if (problem != NULL)
        {
          g_autoptr (GPtrArray) gates = g_ptr_array_new_null_terminated (0, NULL, TRUE);

          for (guint f = 0; f < g->filters->len; f++)
            {
              const GateGroup *o = g_ptr_array_index (g->filters, f);

              for (guint j = 0; j < o->gates->len; j++)
                g_ptr_array_add (gates, (gpointer) ((GateUnit *) g_ptr_array_index (o->gates, j))->tensor->name);
            }
          return rpe_set_error_finding (error, RPE_ERROR_INVALID_ARGUMENT, RPE_FINDING_GATE,
                                        (const char *const *) gates->pdata,
                                        "Cannot tell which gate the SPE module '%s' uses: %s", g->prefix, problem);
        }
      if (g->layered && gg->layered)
        {
          for (guint i = 0; i < gg->gates->len && gate == NULL; i++)
            if (((GateUnit *) g_ptr_array_index (gg->gates, i))->layer == u->layer)
              gate = ((GateUnit *) g_ptr_array_index (gg->gates, i))->tensor;
          if (gate == NULL)
            {
              g_autofree char *list = gate_layers (gg);

              add_finding (findings, rpe_finding_new (RPE_FINDING_NONE, NULL,
                                                      "Layer %d of '%s' has no gate (layers with a gate: %s)",
                                                      u->layer, g->prefix, list));
            }
        }
      else if (gg->layered)
        {
          const GateUnit *gu = NULL;

          for (guint i = 0; i < gg->gates->len && gu == NULL; i++)
            if (layer < 0 || ((GateUnit *) g_ptr_array_index (gg->gates, i))->layer == layer)
              gu = g_ptr_array_index (gg->gates, i);
          if (gu == NULL)
            {
              g_autofree char *list = gate_layers (gg);
              return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                                    "The SPE module '%s' has no gate for layer %d (layers with a gate: %s)",
                                    g->prefix, layer, list);
            }
          if (layer < 0 && gg->gates->len > 1)
            {
              g_autofree char *list = gate_layers (gg);
              g_autoptr (GPtrArray) layers = layer_names (gg->gates, TRUE);

              add_finding (findings, rpe_finding_new (RPE_FINDING_LAYER, (const char *const *) layers->pdata,
                                                      "'%s' has %u gates (layers %s); using layer %d's '%s'",
                                                      g->prefix, gg->gates->len, list, gu->layer,
                                                      gu->tensor->name));
            }
          gate = gu->tensor;
        }
      else
        gate = ((GateUnit *) g_ptr_array_index (gg->gates, 0))->tensor;
    }

  if (m == RPE_SPE_CONV)
    {
      conv_heads (dv, g, gate, channels, &h, &d);
      if (gate != NULL && (gate->ndim != 2 || gate->shape[0] * gate->shape[1] != channels))
        {
          g_autofree char *want = g_strdup_printf ("(H, D) with H*D = %" G_GSIZE_FORMAT
                                                   " channels of '%s'", channels, slot[0]->name);
          return shape_error (gate, want, error);
        }
    }
  if (gate != NULL && (gate->ndim != 2 || gate->shape[0] != h || gate->shape[1] != d))
    {
      g_autofree char *want = g_strdup_printf ("(%" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT ") to match '%s'",
                                               h, d, slot[0]->name);
      return shape_error (gate, want, error);
    }

  /* gates of the file that no module claims: never dropped in silence */
  if (!sel->no_gate)
    {
      GString *others = g_string_new (NULL);
      g_autoptr (GPtrArray) names = g_ptr_array_new_null_terminated (0, NULL, TRUE);
      guint n_others = 0;

      for (guint i = 0; i < dv->gate_units->len; i++)
        {
          const GateUnit *gu = g_ptr_array_index (dv->gate_units, i);
          if (gu->group->codes->len == 0 && gu->tensor != gate && gate_fits_hd (gu->tensor, m, h, d))
            {
              if (n_others++ < LIST_MAX)
                {
                  g_string_append_printf (others, "%s'%s'", others->len > 0 ? ", " : "", gu->tensor->name);
                  g_ptr_array_add (names, (gpointer) gu->tensor->name);
                }
            }
        }
      if (n_others > 0)
        add_finding (findings, rpe_finding_new (RPE_FINDING_UNUSED_GATES, (const char *const *) names->pdata,
                                                "The checkpoint has %u gate%s of this shape paired with no module "
                                                "(%s%s), not used%s", n_others, n_others > 1 ? "s" : "",
                                                others->str, n_others > LIST_MAX ? ", ..." : "",
                                                gate != NULL ? "" : " (the template is ungated)"));
      g_string_free (others, TRUE);
    }

  /* values */
  for (gsize s = 0; s < n_slots (m); s++)
    if (!rpe_tensor_check_finite (slot[s], error))
      return FALSE;
  if (gate != NULL && !rpe_tensor_check_finite (gate, error))
    return FALSE;

  /* 2-D filters are held as (H*D, L1*L2) */
  count = size;
  if (size2 > 0 && !rpe_size_mul (size, size2, &count))
    return rpe_set_error (error, RPE_ERROR_OVERFLOW, "The filters of '%s' are too large", slot[0]->name);
  st = rpe_spe_params_init (params, m, h, d, count, gate != NULL);
  if (st != RPE_OK)
    return rpe_set_error (error, st, "Cannot load the SPE module '%s': %s", module,
                          rpe_status_to_string (st));
  if (size2 > 0)
    {
      params->kernel = size;
      params->kernel_cols = size2;
    }

  if (m == RPE_SPE_SINE)
    {
      const float *fr = slot[0]->data, *of = slot[1]->data, *ga = slot[2]->data;
      gsize n = slot[0]->n_elements;

      for (gsize i = 0; i < n; i++)
        {
          params->freqs[i] = (float) (sigmoid (fr[i]) / 2.0);
          params->offsets[i] = of[i];
          params->gains[i] = (float) softplus (ga[i]);
        }
    }
  else
    {
      const float *cq = slot[0]->data, *ck = slot[1]->data;

      for (gsize ch = 0; ch < channels; ch++)
        for (gsize j = 0; j < count; j++)
          {
            if (flax_kernel)
              {
                /* kernel (L[, L2], 1, C): element [j, 0, c]; conv_q is the query filter */
                params->wq[ch * count + j] = cq[j * channels + ch];
                params->wk[ch * count + j] = ck[j * channels + ch];
              }
            else
              {
                /* weight (C, 1, L[, L2]); the reference swaps q and k */
                params->wq[ch * count + j] = ck[ch * count + j];
                params->wk[ch * count + j] = cq[ch * count + j];
              }
          }
    }
  /* the module's convention: its own tensors' (the code's, the gate's) */
  if (g != NULL)
    flax |= g->flax;
  if (gate != NULL)
    flax |= name_is_flax (gate->name);
  if (gate != NULL)
    {
      const float *gv = gate->data;

      for (gsize i = 0; i < h * d; i++)
        params->gate[i] = (float) (flax ? sigmoid (-(double) gv[i]) : sigmoid (gv[i]));
    }

  /* softplus of a huge finite gain overflows float: refuse it */
  if (m == RPE_SPE_SINE && !rpe_all_finite_f (params->gains, h * d * size))
    {
      rpe_spe_params_clear (params);
      return rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                            "Tensor '%s' holds a value too large for softplus in float32",
                            slot[2]->name);
    }
  /* finite but so large that the templates and codes overflow float32 (a
   * gain of 3e38 squares to inf): refuse on load, naming the tensor and where */
  {
    const float *arrays[3] = { NULL, NULL, NULL };
    const char *names[3] = { NULL, NULL, NULL };
    gsize per = h * d * (m == RPE_SPE_SINE ? size : count);

    if (m == RPE_SPE_SINE)
      {
        arrays[0] = params->freqs, names[0] = slot[0]->name;
        arrays[1] = params->offsets, names[1] = slot[1]->name;
        arrays[2] = params->gains, names[2] = slot[2]->name;
      }
    else
      {
        /* wq comes from conv_k and wk from conv_q (PyTorch), the other way for Flax */
        arrays[0] = params->wq, names[0] = slot[flax_kernel ? 0 : 1]->name;
        arrays[1] = params->wk, names[1] = slot[flax_kernel ? 1 : 0]->name;
      }
    for (int a = 0; a < 3; a++)
      for (gsize i = 0; arrays[a] != NULL && i < per; i++)
        if (!(fabsf (arrays[a][i]) <= RPE_CHECKPOINT_MAX_PARAM))
          {
            double v = arrays[a][i];

            rpe_spe_params_clear (params);
            if (m == RPE_SPE_SINE)
              return rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                                    "Tensor '%s' holds %g at index [%zu, %zu, %zu]: SPE parameters must be "
                                    "finite and at most %g in magnitude (larger values overflow float32 "
                                    "in the templates)", names[a], v, (size_t) (i / (d * size)),
                                    (size_t) (i / size % d), (size_t) (i % size), RPE_CHECKPOINT_MAX_PARAM);
            return rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                                  "Tensor '%s' holds %g at channel %zu, tap %zu: SPE parameters must be "
                                  "finite and at most %g in magnitude (larger values overflow float32 "
                                  "in the templates)", names[a], v, (size_t) (i / count), (size_t) (i % count),
                                  RPE_CHECKPOINT_MAX_PARAM);
          }
  }
  if (findings_out != NULL)
    *findings_out = g_steal_pointer (&findings);
  return TRUE;
}

gboolean
rpe_checkpoint_load_spe (const RpeTensorSet  *set,
                         const char          *prefix,
                         int                  layer,
                         RpeSpeParams        *params,
                         GError             **error)
{
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;

  sel.prefix = prefix;
  sel.layer = layer;
  return rpe_checkpoint_load_spe_full (set, &sel, params, NULL, error);
}

/* ---- reading ---------------------------------------------------------- */

static char *
file_stem (const char *name)
{
  g_autofree char *base = g_path_get_basename (name != NULL ? name : "");
  char *dot = strrchr (base, '.');

  if (dot != NULL && dot != base)
    *dot = '\0';
  if (base[0] == '\0' || strcmp (base, ".") == 0 || strcmp (base, G_DIR_SEPARATOR_S) == 0)
    return g_strdup ("array");
  return g_steal_pointer (&base);
}

static RpeTensorSet *
read_data (const guint8 *data,
           gsize         length,
           const char   *name,
           GError      **error)
{
  if (length == 0)
    {
      rpe_set_error (error, RPE_ERROR_FORMAT, "'%s' is empty; it is not a checkpoint file", name);
      return NULL;
    }
  if (length >= 6 && memcmp (data, "\x93NUMPY", 6) == 0)
    {
      RpeTensor *t = rpe_npy_read_bytes (data, length, name, error);
      RpeTensorSet *set;

      if (t == NULL)
        return NULL;
      g_free (t->name);
      t->name = file_stem (name);
      set = rpe_tensor_set_new ();
      rpe_tensor_set_add (set, t, NULL);
      return set;
    }
  if (length >= 9 && data[8] == '{')
    {
      guint64 header_len;

      memcpy (&header_len, data, 8);
      header_len = GUINT64_FROM_LE (header_len);
      /* a JSON header: the safetensors reader names what is wrong, including a
       * header over its size limit */
      if (header_len >= 2)
        return rpe_safetensors_read_bytes (data, length, name, error);
    }
  if (length >= 4 && memcmp (data, "PK\x03\x04", 4) == 0)
    {
      /* a zip: a PyTorch .pt if it holds <archive>/data.pkl, else an .npz
       * (whose reader refuses members that are not .npy) */
      g_autoptr (RpeZip) zip = rpe_zip_open (data, length, name, error);

      if (zip == NULL)
        return NULL;
      if (rpe_pt_is_archive (zip))
        return rpe_pt_read_bytes (data, length, name, error);
      return rpe_npz_read_bytes (data, length, name, error);
    }
  if (length >= 2 && data[0] == 0x80 && data[1] >= 2 && data[1] <= 5)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                     "'%s' is a bare Python pickle: the legacy (non-zip) torch.save format is not "
                     "supported; re-save it with torch.save(..., _use_new_zipfile_serialization=True) "
                     "or convert it to .safetensors", name);
      return NULL;
    }
  if (rpe_msgpack_looks_like (data, length))
    return rpe_msgpack_read_bytes (data, length, name, error);
  rpe_set_error (error, RPE_ERROR_FORMAT,
                 "'%s' is not a .safetensors or .npy file (nor an .npz, a PyTorch .pt or a Flax msgpack checkpoint)", name);
  return NULL;
}

static RpeTensorSet *
rpe_checkpoint_read_bytes_impl (GBytes      *bytes,
                           const char  *name_for_errors,
                           GError     **error)
{
  gsize length;
  const guint8 *data = g_bytes_get_data (bytes, &length);

  return read_data (data, length, name_for_errors != NULL ? name_for_errors : "(checkpoint)", error);
}

static RpeTensorSet *
rpe_checkpoint_read_impl (const char  *path,
                     GError     **error)
{
  GBytes *bytes = rpe_map_file (path, error);
  RpeTensorSet *set;

  if (bytes == NULL)
    return NULL;
  set = rpe_checkpoint_read_bytes (bytes, path, error);
  g_bytes_unref (bytes);
  return set;
}

RpeTensorSet *
rpe_checkpoint_read (const char  *path,
                     GError     **error)
{
  RpeTensorSet * result;

  /* one budget for the whole file */
  rpe_budget_scope_begin ();
  result = rpe_checkpoint_read_impl (path, error);
  rpe_budget_scope_end ();
  return result;
}

RpeTensorSet *
rpe_checkpoint_read_bytes (GBytes      *bytes,
                           const char  *name_for_errors,
                           GError     **error)
{
  RpeTensorSet * result;

  /* one budget for the whole file */
  rpe_budget_scope_begin ();
  result = rpe_checkpoint_read_bytes_impl (bytes, name_for_errors, error);
  rpe_budget_scope_end ();
  return result;
}
