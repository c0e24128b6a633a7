#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-error.h"
#include "rpe-npy.h"
#include "rpe-npz.h"
#include "rpe-pt.h"
#include "rpe-safetensors.h"

/* Checkpoint names (MATH.md section 10).
 *
 * PyTorch (names separated by '.'; <p> is the module prefix, possibly empty):
 *   <p>.spe.freqs|offsets|gains            (H, D, K)   shared sineSPE
 *   <p>.spe.conv_q.weight|conv_k.weight    (H*D, 1, L) shared convSPE
 *   <p>.spe.<layer>.freqs ... / .conv_q.weight ...    unshared ("pytorch-unshared")
 *   <p>.spe_filters.<layer>.gate           (H, D)      g = sigmoid(gate)
 * The reference swaps the filters: the QUERY filter wq is conv_k.weight and the
 * KEY filter wk is conv_q.weight.
 *
 * Flax (names separated by '/'):
 *   <p>/freqs|offsets|gains                (H, D, K)   e.g. <p> = .../SineSPE_0
 *   <p>/conv_q/kernel|conv_k/kernel        (L, 1, H*D) transposed to (H*D, L)
 *   .../SPEGate_<i>/gate                   (H, D)      g = 1 - sigmoid(gate)
 * Assumptions for Flax (documented, not verified against a trained port):
 *   - conv_q/kernel is the query filter and conv_k/kernel the key filter (no swap);
 *   - a gate belongs to the Flax module(s) whose parent path is the deepest
 *     ancestor of the gate's path; gates of a module are numbered as layers
 *     0, 1, ... in the natural order of their paths ("layer_2" < "layer_10").
 *
 * Module H and D: sine from the freqs shape.  Conv from the gate shape when the
 * module has a gate, else from a sine module with the same prefix, else H = 1
 * and D = H*D channels (find_modules reports that; the templates per channel
 * are the same either way). */

typedef enum
{
  CONV_PYTORCH,
  CONV_PYTORCH_UNSHARED,
  CONV_FLAX,
} Convention;

static const char *const convention_names[] = { "pytorch", "pytorch-unshared", "flax" };

/* sine: 0 freqs, 1 offsets, 2 gains; conv: 0 conv_q, 1 conv_k (as named in the file) */
#define N_SLOTS 3

typedef struct
{
  int              layer;            /* -1 for shared codes */
  const RpeTensor *slot[N_SLOTS];
} Code;

typedef struct
{
  int              layer;
  const RpeTensor *tensor;
} Gate;

typedef struct
{
  char         *prefix;
  Convention    convention;
  RpeSpeMethod  method;
  gsize         first_index;         /* position of its first tensor in the set */
  GArray       *codes;               /* Code, sorted by layer */
  GArray       *gates;               /* Gate, sorted by layer */
} Candidate;

static void
candidate_free (gpointer p)
{
  Candidate *c = p;

  g_free (c->prefix);
  g_array_unref (c->codes);
  g_array_unref (c->gates);
  g_free (c);
}

static const char *const sine_slots[] = { "freqs", "offsets", "gains" };
static const char *const conv_slots_pt[] = { "conv_q.weight", "conv_k.weight" };
static const char *const conv_slots_flax[] = { "conv_q/kernel", "conv_k/kernel" };

static gsize
n_slots (RpeSpeMethod method)
{
  return method == RPE_SPE_SINE ? 3 : 2;
}

/* The tensor name a slot would have. */
static char *
slot_name (const Candidate *c,
           int              layer,
           gsize            slot)
{
  if (c->convention == CONV_FLAX)
    return g_strdup_printf ("%s/%s", c->prefix,
                            c->method == RPE_SPE_SINE ? sine_slots[slot] : conv_slots_flax[slot]);
  else
    {
      const char *leaf = c->method == RPE_SPE_SINE ? sine_slots[slot] : conv_slots_pt[slot];
      g_autofree char *spe = NULL;

      if (c->convention == CONV_PYTORCH_UNSHARED)
        spe = g_strdup_printf ("spe.%d.%s", layer, leaf);
      else
        spe = g_strdup_printf ("spe.%s", leaf);
      return c->prefix[0] != '\0' ? g_strdup_printf ("%s.%s", c->prefix, spe) : g_strdup (spe);
    }
}

static Candidate *
find_candidate (GPtrArray    *cands,
                const char   *prefix,
                Convention    convention,
                RpeSpeMethod  method,
                gsize         index)
{
  Candidate *c;

  for (guint i = 0; i < cands->len; i++)
    {
      c = g_ptr_array_index (cands, i);
      if (c->convention == convention && c->method == method && strcmp (c->prefix, prefix) == 0)
        return c;
    }
  c = g_new0 (Candidate, 1);
  c->prefix = g_strdup (prefix);
  c->convention = convention;
  c->method = method;
  c->first_index = index;
  c->codes = g_array_new (FALSE, TRUE, sizeof (Code));
  c->gates = g_array_new (FALSE, TRUE, sizeof (Gate));
  g_ptr_array_add (cands, c);
  return c;
}

static Code *
candidate_code (Candidate *c,
                int        layer)
{
  Code code = { 0 };

  for (guint i = 0; i < c->codes->len; i++)
    if (g_array_index (c->codes, Code, i).layer == layer)
      return &g_array_index (c->codes, Code, i);
  code.layer = layer;
  g_array_append_val (c->codes, code);
  return &g_array_index (c->codes, Code, c->codes->len - 1);
}

/* A decimal layer index (no sign, no leading '+'), bounded. */
static gboolean
parse_layer (const char *s,
             int        *out)
{
  long v = 0;

  if (*s == '\0' || strlen (s) > 6)
    return FALSE;
  for (const char *p = s; *p != '\0'; p++)
    {
      if (!g_ascii_isdigit (*p))
        return FALSE;
      v = v * 10 + (*p - '0');
    }
  *out = (int) v;
  return TRUE;
}

static char *
join_components (char **parts,
                 gsize  n)
{
  GString *s = g_string_new (NULL);

  for (gsize i = 0; i < n; i++)
    {
      if (i > 0)
        g_string_append_c (s, '.');
      g_string_append (s, parts[i]);
    }
  return g_string_free (s, FALSE);
}

/* Recognises one PyTorch-style name. */
static void
scan_pytorch (GPtrArray   *cands,
              GPtrArray   *pt_gates,
              const RpeTensor *t,
              gsize        index)
{
  g_auto (GStrv) parts = g_strsplit (t->name, ".", -1);
  gsize n = g_strv_length (parts);
  int layer;

  /* <p>.spe.freqs */
  if (n >= 2 && strcmp (parts[n - 2], "spe") == 0)
    for (gsize s = 0; s < 3; s++)
      if (strcmp (parts[n - 1], sine_slots[s]) == 0)
        {
          g_autofree char *prefix = join_components (parts, n - 2);
          Candidate *c = find_candidate (cands, prefix, CONV_PYTORCH, RPE_SPE_SINE, index);
          candidate_code (c, -1)->slot[s] = t;
          return;
        }
  /* <p>.spe.<layer>.freqs */
  if (n >= 3 && strcmp (parts[n - 3], "spe") == 0 && parse_layer (parts[n - 2], &layer))
    for (gsize s = 0; s < 3; s++)
      if (strcmp (parts[n - 1], sine_slots[s]) == 0)
        {
          g_autofree char *prefix = join_components (parts, n - 3);
          Candidate *c = find_candidate (cands, prefix, CONV_PYTORCH_UNSHARED, RPE_SPE_SINE, index);
          candidate_code (c, layer)->slot[s] = t;
          return;
        }
  /* <p>.spe.conv_q.weight */
  if (n >= 3 && strcmp (parts[n - 3], "spe") == 0 && strcmp (parts[n - 1], "weight") == 0)
    for (gsize s = 0; s < 2; s++)
      if (strcmp (parts[n - 2], s == 0 ? "conv_q" : "conv_k") == 0)
        {
          g_autofree char *prefix = join_components (parts, n - 3);
          Candidate *c = find_candidate (cands, prefix, CONV_PYTORCH, RPE_SPE_CONV, index);
          candidate_code (c, -1)->slot[s] = t;
          return;
        }
  /* <p>.spe.<layer>.conv_q.weight */
  if (n >= 4 && strcmp (parts[n - 4], "spe") == 0 && parse_layer (parts[n - 3], &layer)
      && strcmp (parts[n - 1], "weight") == 0)
    for (gsize s = 0; s < 2; s++)
      if (strcmp (parts[n - 2], s == 0 ? "conv_q" : "conv_k") == 0)
        {
          g_autofree char *prefix = join_components (parts, n - 4);
          Candidate *c = find_candidate (cands, prefix, CONV_PYTORCH_UNSHARED, RPE_SPE_CONV, index);
          candidate_code (c, layer)->slot[s] = t;
          return;
        }
  /* <p>.spe_filters.<layer>.gate: attached once all names are scanned */
  if (n >= 3 && strcmp (parts[n - 3], "spe_filters") == 0 && parse_layer (parts[n - 2], &layer)
      && strcmp (parts[n - 1], "gate") == 0)
    g_ptr_array_add (pt_gates, (gpointer) t);
}

/* Recognises one Flax-style name ('/' separated). */
static void
scan_flax (GPtrArray       *cands,
           GPtrArray       *flax_gates,
           const RpeTensor *t,
           gsize            index)
{
  const char *slash = strrchr (t->name, '/');
  const char *leaf;
  g_autofree char *dir = NULL;

  if (slash == NULL)
    return;
  leaf = slash + 1;
  dir = g_strndup (t->name, (gsize) (slash - t->name));
  for (gsize s = 0; s < 3; s++)
    if (strcmp (leaf, sine_slots[s]) == 0)
      {
        Candidate *c = find_candidate (cands, dir, CONV_FLAX, RPE_SPE_SINE, index);
        candidate_code (c, -1)->slot[s] = t;
        return;
      }
  if (strcmp (leaf, "kernel") == 0)
    {
      const char *slash2 = strrchr (dir, '/');
      const char *conv = slash2 != NULL ? slash2 + 1 : dir;
      g_autofree char *prefix = slash2 != NULL ? g_strndup (dir, (gsize) (slash2 - dir)) : g_strdup ("");

      for (gsize s = 0; s < 2; s++)
        if (strcmp (conv, s == 0 ? "conv_q" : "conv_k") == 0)
          {
            Candidate *c = find_candidate (cands, prefix, CONV_FLAX, RPE_SPE_CONV, index);
            candidate_code (c, -1)->slot[s] = t;
            return;
          }
    }
  if (strcmp (leaf, "gate") == 0)
    {
      const char *module = strrchr (dir, '/');
      module = module != NULL ? module + 1 : dir;
      if (g_str_has_prefix (module, "SPEGate"))
        g_ptr_array_add (flax_gates, (gpointer) t);
    }
}

/* Natural order: digit runs compare as numbers. */
static int
natural_compare (const char *a,
                 const char *b)
{
  while (*a != '\0' && *b != '\0')
    {
      if (g_ascii_isdigit (*a) && g_ascii_isdigit (*b))
        {
          const char *ea = a, *eb = b;
          gsize la, lb;
          int cmp;

          while (*a == '0' && g_ascii_isdigit (a[1]))
            a++;
          while (*b == '0' && g_ascii_isdigit (b[1]))
            b++;
          for (ea = a; g_ascii_isdigit (*ea); ea++)
            ;
          for (eb = b; g_ascii_isdigit (*eb); eb++)
            ;
          la = (gsize) (ea - a);
          lb = (gsize) (eb - b);
          if (la != lb)
            return la < lb ? -1 : 1;
          if ((cmp = strncmp (a, b, la)) != 0)
            return cmp;
          a = ea;
          b = eb;
        }
      else
        {
          if (*a != *b)
            return (guchar) *a < (guchar) *b ? -1 : 1;
          a++;
          b++;
        }
    }
  return *a == *b ? 0 : *a == '\0' ? -1 : 1;
}

static int
tensor_ptr_natural_compare (gconstpointer a,
                            gconstpointer b)
{
  const RpeTensor *x = *(const RpeTensor *const *) a;
  const RpeTensor *y = *(const RpeTensor *const *) b;

  return natural_compare (x->name, y->name);
}

static int
gate_compare (gconstpointer a,
              gconstpointer b)
{
  const Gate *x = a, *y = b;

  return x->layer < y->layer ? -1 : x->layer > y->layer;
}

static int
code_compare (gconstpointer a,
              gconstpointer b)
{
  const Code *x = a, *y = b;

  return x->layer < y->layer ? -1 : x->layer > y->layer;
}

static int
candidate_compare (gconstpointer a,
                   gconstpointer b)
{
  const Candidate *x = *(Candidate *const *) a;
  const Candidate *y = *(Candidate *const *) b;

  return x->first_index < y->first_index ? -1 : x->first_index > y->first_index;
}

/* Whether `parent` ('' = the root) is an ancestor directory of `path`. */
static gboolean
is_ancestor (const char *parent,
             const char *path)
{
  gsize n = strlen (parent);

  if (n == 0)
    return TRUE;
  return strncmp (parent, path, n) == 0 && path[n] == '/';
}

static char *
parent_of (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash != NULL ? g_strndup (path, (gsize) (slash - path)) : g_strdup ("");
}

/* All candidate modules of a set (complete or not), in order of first appearance. */
static GPtrArray *
collect_candidates (const RpeTensorSet *set)
{
  GPtrArray *cands = g_ptr_array_new_with_free_func (candidate_free);
  g_autoptr (GPtrArray) pt_gates = g_ptr_array_new ();
  g_autoptr (GPtrArray) flax_gates = g_ptr_array_new ();

  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);

      if (strchr (t->name, '/') != NULL)
        scan_flax (cands, flax_gates, t, i);
      else
        scan_pytorch (cands, pt_gates, t, i);
    }

  /* PyTorch gates go to the modules of the same prefix */
  for (guint i = 0; i < pt_gates->len; i++)
    {
      const RpeTensor *t = g_ptr_array_index (pt_gates, i);
      g_auto (GStrv) parts = g_strsplit (t->name, ".", -1);
      gsize n = g_strv_length (parts);
      g_autofree char *prefix = join_components (parts, n - 3);
      Gate gate = { 0 };

      parse_layer (parts[n - 2], &gate.layer);
      gate.tensor = t;
      for (guint j = 0; j < cands->len; j++)
        {
          Candidate *c = g_ptr_array_index (cands, j);
          if (c->convention != CONV_FLAX && strcmp (c->prefix, prefix) == 0)
            g_array_append_val (c->gates, gate);
        }
    }

  /* Flax gates go to the module(s) whose parent is their deepest ancestor;
   * layers are numbered in natural path order */
  g_ptr_array_sort (flax_gates, tensor_ptr_natural_compare);
  for (guint i = 0; i < flax_gates->len; i++)
    {
      const RpeTensor *t = g_ptr_array_index (flax_gates, i);
      gsize best = 0;
      gboolean any = FALSE;

      for (int pass = 0; pass < 2; pass++)
        for (guint j = 0; j < cands->len; j++)
          {
            Candidate *c = g_ptr_array_index (cands, j);
            g_autofree char *parent = NULL;

            if (c->convention != CONV_FLAX)
              continue;
            parent = parent_of (c->prefix);
            if (!is_ancestor (parent, t->name))
              continue;
            if (pass == 0)
              {
                if (!any || strlen (parent) + 1 > best)
                  best = strlen (parent) + 1;
                any = TRUE;
              }
            else if (strlen (parent) + 1 == best)
              {
                Gate gate = { (int) c->gates->len, t };
                g_array_append_val (c->gates, gate);
              }
          }
    }

  for (guint j = 0; j < cands->len; j++)
    {
      Candidate *c = g_ptr_array_index (cands, j);
      g_array_sort (c->codes, code_compare);
      g_array_sort (c->gates, gate_compare);
    }
  g_ptr_array_sort (cands, candidate_compare);
  return cands;
}

static gboolean
code_complete (const Candidate *c,
               const Code      *code)
{
  for (gsize s = 0; s < n_slots (c->method); s++)
    if (code->slot[s] == NULL)
      return FALSE;
  return TRUE;
}

static const Code *
first_complete_code (const Candidate *c)
{
  for (guint i = 0; i < c->codes->len; i++)
    if (code_complete (c, &g_array_index (c->codes, Code, i)))
      return &g_array_index (c->codes, Code, i);
  return NULL;
}

static const Gate *
find_gate (const Candidate *c,
           int              layer)
{
  for (guint i = 0; i < c->gates->len; i++)
    if (g_array_index (c->gates, Gate, i).layer == layer)
      return &g_array_index (c->gates, Gate, i);
  return NULL;
}

/* Conv channel count and filter length from the (file) shape, or FALSE. */
static gboolean
conv_geometry (const Candidate *c,
               const RpeTensor *t,
               gsize           *channels,
               gsize           *length)
{
  if (t->ndim != 3 || t->shape[1] != 1)
    return FALSE;
  if (c->convention == CONV_FLAX)
    {
      *length = t->shape[0];
      *channels = t->shape[2];
    }
  else
    {
      *channels = t->shape[0];
      *length = t->shape[2];
    }
  return TRUE;
}

/* H and D of a conv module: from its gate, a sine module with the same prefix,
 * or (1, channels). */
static void
conv_heads (GPtrArray       *cands,
            const Candidate *c,
            const Gate      *gate,
            gsize            channels,
            gsize           *h,
            gsize           *d)
{
  if (gate == NULL && c->gates->len > 0)
    gate = &g_array_index (c->gates, Gate, 0);
  if (gate != NULL && gate->tensor->ndim == 2
      && gate->tensor->shape[0] * gate->tensor->shape[1] == channels && channels > 0)
    {
      *h = gate->tensor->shape[0];
      *d = gate->tensor->shape[1];
      return;
    }
  for (guint i = 0; i < cands->len; i++)
    {
      const Candidate *o = g_ptr_array_index (cands, i);
      const Code *code;

      if (o->method != RPE_SPE_SINE || strcmp (o->prefix, c->prefix) != 0
          || (code = first_complete_code (o)) == NULL || code->slot[0]->ndim != 3)
        continue;
      if (code->slot[0]->shape[0] * code->slot[0]->shape[1] == channels && channels > 0)
        {
          *h = code->slot[0]->shape[0];
          *d = code->slot[0]->shape[1];
          return;
        }
    }
  *h = 1;
  *d = channels;
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
  g_free (info);
}

GPtrArray *
rpe_checkpoint_find_modules (const RpeTensorSet *set)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_spe_module_info_free);
  g_autoptr (GPtrArray) cands = collect_candidates (set);

  for (guint i = 0; i < cands->len; i++)
    {
      const Candidate *c = g_ptr_array_index (cands, i);
      const Code *code = first_complete_code (c);
      RpeSpeModuleInfo *info;
      gsize h, d, size;

      if (code == NULL)
        continue;
      if (c->method == RPE_SPE_SINE)
        {
          const RpeTensor *f = code->slot[0];
          if (f->ndim != 3)
            continue;
          h = f->shape[0];
          d = f->shape[1];
          size = f->shape[2];
        }
      else
        {
          gsize channels;
          if (!conv_geometry (c, code->slot[0], &channels, &size))
            continue;
          conv_heads (cands, c, NULL, channels, &h, &d);
        }
      info = g_new0 (RpeSpeModuleInfo, 1);
      info->prefix = g_strdup (c->prefix);
      info->method = c->method;
      info->n_heads = h;
      info->n_features = d;
      info->size = size;
      info->convention = g_strdup (convention_names[c->convention]);
      info->layers = g_array_new (FALSE, FALSE, sizeof (int));
      if (c->convention == CONV_PYTORCH_UNSHARED)
        {
          /* one code per layer: the layers with complete code parameters */
          for (guint j = 0; j < c->codes->len; j++)
            if (code_complete (c, &g_array_index (c->codes, Code, j)))
              g_array_append_val (info->layers, g_array_index (c->codes, Code, j).layer);
        }
      else
        for (guint j = 0; j < c->gates->len; j++)
          g_array_append_val (info->layers, g_array_index (c->gates, Gate, j).layer);
      g_ptr_array_add (out, info);
    }
  return out;
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

static gboolean
missing_error (const Candidate *c,
               const Code      *code,
               GError         **error)
{
  GString *missing = g_string_new (NULL), *found = g_string_new (NULL);
  gsize n_missing = 0;

  for (gsize s = 0; s < n_slots (c->method); s++)
    {
      g_autofree char *name = slot_name (c, code->layer, s);
      GString *which = code->slot[s] == NULL ? missing : found;

      n_missing += code->slot[s] == NULL;
      g_string_append_printf (which, "%s'%s'", which->len > 0 ? ", " : "", name);
    }
  if (found->len > 0)
    {
      g_string_prepend (found, " (found ");
      g_string_append_c (found, ')');
    }
  rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                 "The %s SPE module '%s' is incomplete: %s %s missing%s",
                 c->method == RPE_SPE_SINE ? "sine" : "conv", c->prefix, missing->str,
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
module_list (GPtrArray *cands)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < cands->len; i++)
    {
      const Candidate *c = g_ptr_array_index (cands, i);
      g_string_append_printf (s, "%s'%s'", s->len > 0 ? ", " : "", c->prefix);
    }
  return g_string_free (s, FALSE);
}

static char *
layer_list (const Candidate *c,
            gboolean         codes)
{
  GString *s = g_string_new (NULL);
  guint n = codes ? c->codes->len : c->gates->len;

  for (guint i = 0; i < n; i++)
    g_string_append_printf (s, "%s%d", s->len > 0 ? ", " : "",
                            codes ? g_array_index (c->codes, Code, i).layer
                                  : g_array_index (c->gates, Gate, i).layer);
  return g_string_free (s, FALSE);
}

gboolean
rpe_checkpoint_load_spe (const RpeTensorSet  *set,
                         const char          *prefix,
                         int                  layer,
                         RpeSpeParams        *params,
                         GError             **error)
{
  g_autoptr (GPtrArray) cands = NULL;
  const Candidate *c = NULL;
  const Code *code = NULL;
  const Gate *gate = NULL;
  gsize h, d, size;
  RpeStatus st;

  memset (params, 0, sizeof *params);
  cands = collect_candidates (set);
  if (cands->len == 0)
    return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                          "No SPE module found: the checkpoint has no tensor named like "
                          "'<prefix>.spe.freqs', '<prefix>.spe.conv_q.weight', "
                          "'.../SineSPE_0/freqs' or '.../conv_q/kernel'");

  /* the module */
  for (guint i = 0; i < cands->len && c == NULL; i++)
    {
      const Candidate *o = g_ptr_array_index (cands, i);
      if (prefix != NULL ? strcmp (o->prefix, prefix) == 0 : first_complete_code (o) != NULL)
        c = o;
    }
  if (c == NULL && prefix == NULL)
    c = g_ptr_array_index (cands, 0);
  if (c == NULL)
    {
      g_autofree char *list = module_list (cands);
      return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                            "No SPE module with prefix '%s' (found: %s)", prefix, list);
    }

  /* the code (per layer when unshared) and the gate */
  if (c->convention == CONV_PYTORCH_UNSHARED)
    {
      for (guint i = 0; i < c->codes->len && code == NULL; i++)
        {
          const Code *o = &g_array_index (c->codes, Code, i);
          if (layer < 0 || o->layer == layer)
            code = o;
        }
      if (code == NULL)
        {
          g_autofree char *list = layer_list (c, TRUE);
          return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                                "The SPE module '%s' has no parameters for layer %d (layers: %s)",
                                c->prefix, layer, list);
        }
      gate = find_gate (c, code->layer);
    }
  else
    {
      code = &g_array_index (c->codes, Code, 0);
      if (c->gates->len > 0)
        {
          gate = layer < 0 ? &g_array_index (c->gates, Gate, 0) : find_gate (c, layer);
          if (gate == NULL)
            {
              g_autofree char *list = layer_list (c, FALSE);
              return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                                    "The SPE module '%s' has no gate for layer %d (layers with a gate: %s)",
                                    c->prefix, layer, list);
            }
        }
    }
  if (!code_complete (c, code))
    return missing_error (c, code, error);

  /* shapes */
  if (c->method == RPE_SPE_SINE)
    {
      const RpeTensor *f = code->slot[0];

      if (f->ndim != 3 || f->n_elements == 0)
        return shape_error (f, "(H, D, K) with no empty dimension", error);
      for (gsize s = 1; s < 3; s++)
        if (!same_shape (code->slot[s], f))
          {
            g_autofree char *fs = rpe_tensor_shape_string (f);
            g_autofree char *want = g_strdup_printf ("%s like '%s'", fs, f->name);
            return shape_error (code->slot[s], want, error);
          }
      h = f->shape[0];
      d = f->shape[1];
      size = f->shape[2];
    }
  else
    {
      const RpeTensor *q = code->slot[0];
      gsize channels;

      if (!conv_geometry (c, q, &channels, &size) || q->n_elements == 0)
        return shape_error (q, c->convention == CONV_FLAX ? "(L, 1, H*D)" : "(H*D, 1, L)", error);
      if (!same_shape (code->slot[1], q))
        {
          g_autofree char *qs = rpe_tensor_shape_string (q);
          g_autofree char *want = g_strdup_printf ("%s like '%s'", qs, q->name);
          return shape_error (code->slot[1], want, error);
        }
      conv_heads (cands, c, gate, channels, &h, &d);
      if (gate != NULL && (gate->tensor->ndim != 2
                           || gate->tensor->shape[0] * gate->tensor->shape[1] != channels))
        {
          g_autofree char *want = g_strdup_printf ("(H, D) with H*D = %" G_GSIZE_FORMAT
                                                   " channels of '%s'", channels, q->name);
          return shape_error (gate->tensor, want, error);
        }
    }
  if (gate != NULL && (gate->tensor->ndim != 2 || gate->tensor->shape[0] != h || gate->tensor->shape[1] != d))
    {
      g_autofree char *want = g_strdup_printf ("(%" G_GSIZE_FORMAT ", %" G_GSIZE_FORMAT ") to match '%s'",
                                               h, d, code->slot[0]->name);
      return shape_error (gate->tensor, want, error);
    }

  /* values */
  for (gsize s = 0; s < n_slots (c->method); s++)
    if (!rpe_tensor_check_finite (code->slot[s], error))
      return FALSE;
  if (gate != NULL && !rpe_tensor_check_finite (gate->tensor, error))
    return FALSE;

  st = rpe_spe_params_init (params, c->method, h, d, size, gate != NULL);
  if (st != RPE_OK)
    return rpe_set_error (error, st, "Cannot load the SPE module '%s': %s", c->prefix,
                          rpe_status_to_string (st));

  if (c->method == RPE_SPE_SINE)
    {
      const float *fr = code->slot[0]->data, *of = code->slot[1]->data, *ga = code->slot[2]->data;
      gsize n = code->slot[0]->n_elements;

      for (gsize i = 0; i < n; i++)
        {
          params->freqs[i] = (float) (sigmoid (fr[i]) / 2.0);
          params->offsets[i] = of[i];
          params->gains[i] = (float) softplus (ga[i]);
        }
    }
  else
    {
      const float *cq = code->slot[0]->data, *ck = code->slot[1]->data;
      gsize channels = h * d;

      for (gsize ch = 0; ch < channels; ch++)
        for (gsize j = 0; j < size; j++)
          {
            if (c->convention == CONV_FLAX)
              {
                /* kernel (L, 1, C): element [j, 0, c]; conv_q is the query filter */
                params->wq[ch * size + j] = cq[j * channels + ch];
                params->wk[ch * size + j] = ck[j * channels + ch];
              }
            else
              {
                /* weight (C, 1, L); the reference swaps q and k */
                params->wq[ch * size + j] = ck[ch * size + j];
                params->wk[ch * size + j] = cq[ch * size + j];
              }
          }
    }
  if (gate != NULL)
    {
      const float *g = gate->tensor->data;

      for (gsize i = 0; i < h * d; i++)
        params->gate[i] = (float) (c->convention == CONV_FLAX ? sigmoid (-(double) g[i])
                                                               : sigmoid (g[i]));
    }

  /* softplus of a huge finite gain overflows float: refuse it */
  if (c->method == RPE_SPE_SINE && !rpe_all_finite_f (params->gains, h * d * size))
    {
      rpe_spe_params_clear (params);
      return rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                            "Tensor '%s' holds a value too large for softplus in float32",
                            code->slot[2]->name);
    }
  /* finite but so large that the templates and codes overflow float32 (a
   * gain of 3e38 squares to inf): refuse on load, naming the tensor and where */
  {
    const float *arrays[3] = { NULL, NULL, NULL };
    const char *names[3] = { NULL, NULL, NULL };
    gsize per = h * d * size;

    if (c->method == RPE_SPE_SINE)
      {
        arrays[0] = params->freqs, names[0] = code->slot[0]->name;
        arrays[1] = params->offsets, names[1] = code->slot[1]->name;
        arrays[2] = params->gains, names[2] = code->slot[2]->name;
      }
    else
      {
        /* wq comes from conv_k and wk from conv_q (PyTorch), the other way for Flax */
        arrays[0] = params->wq, names[0] = code->slot[c->convention == CONV_FLAX ? 0 : 1]->name;
        arrays[1] = params->wk, names[1] = code->slot[c->convention == CONV_FLAX ? 1 : 0]->name;
      }
    for (int a = 0; a < 3; a++)
      for (gsize i = 0; arrays[a] != NULL && i < per; i++)
        if (!(fabsf (arrays[a][i]) <= RPE_CHECKPOINT_MAX_PARAM))
          {
            double v = arrays[a][i];

            rpe_spe_params_clear (params);
            if (c->method == RPE_SPE_SINE)
              return rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                                    "Tensor '%s' holds %g at index [%zu, %zu, %zu]: SPE parameters must be "
                                    "finite and at most %g in magnitude (larger values overflow float32 "
                                    "in the templates)", names[a], v, (size_t) (i / (d * size)),
                                    (size_t) (i / size % d), (size_t) (i % size), RPE_CHECKPOINT_MAX_PARAM);
            return rpe_set_error (error, RPE_ERROR_NOT_FINITE,
                                  "Tensor '%s' holds %g at channel %zu, tap %zu: SPE parameters must be "
                                  "finite and at most %g in magnitude (larger values overflow float32 "
                                  "in the templates)", names[a], v, (size_t) (i / size), (size_t) (i % size),
                                  RPE_CHECKPOINT_MAX_PARAM);
          }
  }
  return TRUE;
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
  rpe_set_error (error, RPE_ERROR_FORMAT,
                 "'%s' is not a .safetensors or .npy file (nor an .npz or a PyTorch .pt)", name);
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
