/* rpe-session.c: reading and writing .rpe-session files (see rpe-session.h). */
#include "config.h"

#include "rpe-session.h"

#include <math.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "rpe-alloc.h"
#include "rpe-checkpoint.h"
#include "rpe-colormap.h"
#include "rpe-demos.h"
#include "rpe-error.h"
#include "rpe-file.h"
#include "rpe-npy.h"
#include "rpe-outputs.h"
#include "rpe-tensor-map.h"

#define MAX_DEPTH      16            /* nesting of the JSON text */
#define MAX_HEADS      1024          /* the "head" property's range */
#define MAX_FEATURES   4096          /* the "feature" property's range */
#define MAX_SIZE       65536         /* K sines or L taps */
#define MAX_VALUES     (1u << 26)    /* floats in one array */

static const char *const window_views[] = { "templates", "attention", "curves", "teaching", "outputs", NULL };
/* the Outputs view's choices, by RpeValuesKind and RpeOutputsCompare (the `rpe export outputs` names) */
static const char *const outputs_values_names[] = { "impulse", "sweep", "noise", "array", NULL };
static const char *const outputs_compare_names[] = { "softmax", "kernel", NULL };

/* ------------------------------------------------------------ lifecycle */

static void
checkpoint_clear (RpeSessionCheckpoint *c)
{
  g_clear_pointer (&c->path, g_free);
  g_clear_pointer (&c->sha256, g_free);
  g_clear_pointer (&c->prefix, g_free);
  g_clear_pointer (&c->map, g_strfreev);
  c->layer = -1;
}

static RpeSession *
session_new_empty (void)
{
  RpeSession *s = g_new0 (RpeSession, 1);

  s->view = g_strdup ("templates");
  s->template_cell = -1;
  s->checkpoint.layer = -1;
  s->warnings = g_ptr_array_new_with_free_func (g_free);
  return s;
}

RpeSession *
rpe_session_new_from_state (RpeExplorerState *state)
{
  RpeSession *s;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (state), NULL);
  s = session_new_empty ();
  s->state = rpe_explorer_state_new ();
  rpe_explorer_state_copy_into (state, s->state);
  return s;
}

void
rpe_session_free (RpeSession *session)
{
  if (session == NULL)
    return;
  g_clear_object (&session->state);
  g_free (session->view);
  checkpoint_clear (&session->checkpoint);
  g_free (session->content_path);
  g_free (session->content_sha256);
  g_free (session->outputs.positions);
  g_free (session->outputs.values_path);
  g_free (session->outputs.values_sha256);
  g_free (session->export_title);
  g_strfreev (session->export_options);
  g_free (session->file);
  g_ptr_array_unref (session->warnings);
  rpe_model_print_unref (session->model_print);
  g_free (session);
}

void
rpe_session_set_checkpoint (RpeSession        *session,
                            const char        *path,
                            const char        *prefix,
                            int                layer,
                            const char *const *map)
{
  g_return_if_fail (session != NULL);
  checkpoint_clear (&session->checkpoint);
  session->checkpoint.path = g_strdup (path);
  session->checkpoint.prefix = g_strdup (prefix);
  session->checkpoint.layer = layer;
  session->checkpoint.map = map != NULL && map[0] != NULL ? g_strdupv ((char **) map) : NULL;
}

void
rpe_session_set_content_path (RpeSession *session,
                              const char *path)
{
  g_return_if_fail (session != NULL);
  g_free (session->content_path);
  session->content_path = g_strdup (path);
  g_clear_pointer (&session->content_sha256, g_free);
}

/* ------------------------------------------------------- state copies */

/* The properties a session holds: readable, writable, not construct-only. */
static GParamSpec **
session_properties (RpeExplorerState *state,
                    guint            *n)
{
  GParamSpec **all = g_object_class_list_properties (G_OBJECT_GET_CLASS (state), n);
  guint kept = 0;

  for (guint i = 0; i < *n; i++)
    if ((all[i]->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE
        && (all[i]->flags & G_PARAM_CONSTRUCT_ONLY) == 0)
      all[kept++] = all[i];
  *n = kept;
  return all;
}

static gboolean trained_equal (const RpeExplorerTrained *a, const RpeExplorerTrained *b);

static void
copy_module (RpeExplorerState *src,
             RpeExplorerState *dest,
             RpeSpeMethod      kind)
{
  const RpeSpeParams *p = rpe_explorer_state_get_params (src, kind);

  if (p == NULL)
    return;
  if (kind == RPE_SPE_SINE)
    rpe_explorer_state_set_modules (dest, p, rpe_explorer_state_get_source (src, kind), NULL, NULL, NULL);
  else
    rpe_explorer_state_set_modules (dest, NULL, NULL, p, rpe_explorer_state_get_source (src, kind), NULL);
}

void
rpe_explorer_state_copy_into (RpeExplorerState *src,
                              RpeExplorerState *dest)
{
  g_autofree GParamSpec **props = NULL;
  const float *w;
  const float *npy;
  gsize count, ndim, shape[3];
  guint n;

  g_return_if_fail (RPE_IS_EXPLORER_STATE (src));
  g_return_if_fail (RPE_IS_EXPLORER_STATE (dest));

  copy_module (src, dest, RPE_SPE_SINE);
  copy_module (src, dest, RPE_SPE_CONV);
  w = rpe_explorer_state_get_fastrpb_weights (src, &count);
  rpe_explorer_state_set_fastrpb_weights (dest, w, count);
  {
    const char *label = NULL;
    const RpeLrpeTrained *t = rpe_explorer_state_get_lrpe_trained (src, &label);

    /* the "lrpe-trained" switch is among the properties below */
    if (t != NULL || rpe_explorer_state_get_lrpe_trained (dest, NULL) != NULL)
      rpe_explorer_state_set_lrpe_trained (dest, t, label);
  }
  npy = rpe_explorer_state_get_npy_content (src, &ndim, shape);
  if (npy != NULL)
    rpe_explorer_state_set_npy_content (dest, npy, ndim, shape, NULL);
  else
    rpe_explorer_state_clear_npy_content (dest);
  rpe_explorer_state_restore_capture (dest, rpe_explorer_state_get_capture (src));
  /* the trained FastRPB biases and learned APE (their switches are among the properties) */
  rpe_explorer_state_restore_trained (dest, rpe_explorer_state_get_trained (src));
  /* the properties last: loading content switches "content" to NPY */
  props = session_properties (src, &n);
  g_object_freeze_notify (G_OBJECT (dest));
  for (guint i = 0; i < n; i++)
    {
      GValue v = G_VALUE_INIT;

      g_value_init (&v, props[i]->value_type);
      g_object_get_property (G_OBJECT (src), props[i]->name, &v);
      g_object_set_property (G_OBJECT (dest), props[i]->name, &v);
      g_value_unset (&v);
    }
  g_object_thaw_notify (G_OBJECT (dest));
}

static gboolean
floats_equal (const float *a,
              const float *b,
              gsize        n)
{
  if (a == NULL || b == NULL)
    return a == b;
  return memcmp (a, b, n * sizeof (float)) == 0;
}

static gboolean
params_equal (const RpeSpeParams *a,
              const RpeSpeParams *b,
              gboolean            with_gate)
{
  gsize hd, count;

  if (a == NULL || b == NULL)
    return a == b;
  if (a->method != b->method || a->n_heads != b->n_heads || a->n_features != b->n_features
      || a->n_sines != b->n_sines || a->kernel != b->kernel || a->kernel_cols != b->kernel_cols)
    return FALSE;
  hd = a->n_heads * a->n_features;
  count = hd * (a->method == RPE_SPE_SINE ? a->n_sines : a->kernel * MAX (a->kernel_cols, 1));
  if (a->method == RPE_SPE_SINE
      ? !floats_equal (a->freqs, b->freqs, count) || !floats_equal (a->offsets, b->offsets, count)
        || !floats_equal (a->gains, b->gains, count)
      : !floats_equal (a->wq, b->wq, count) || !floats_equal (a->wk, b->wk, count))
    return FALSE;
  return !with_gate || floats_equal (a->gate, b->gate, hd);
}

gboolean
rpe_explorer_state_equal (RpeExplorerState *a,
                          RpeExplorerState *b,
                          char            **what)
{
  g_autofree GParamSpec **props = NULL;
  const float *wa, *wb, *na, *nb;
  gsize ca, cb, nda, ndb, sa[3], sb[3];
  guint n;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (a) && RPE_IS_EXPLORER_STATE (b), FALSE);
  props = session_properties (a, &n);
  for (guint i = 0; i < n; i++)
    {
      GValue va = G_VALUE_INIT, vb = G_VALUE_INIT;
      gboolean same;

      g_value_init (&va, props[i]->value_type);
      g_value_init (&vb, props[i]->value_type);
      g_object_get_property (G_OBJECT (a), props[i]->name, &va);
      g_object_get_property (G_OBJECT (b), props[i]->name, &vb);
      same = g_param_values_cmp (props[i], &va, &vb) == 0;
      g_value_unset (&va);
      g_value_unset (&vb);
      if (!same)
        {
          if (what != NULL)
            *what = g_strdup_printf ("property “%s”", props[i]->name);
          return FALSE;
        }
    }
  for (guint k = 0; k < 2; k++)
    {
      if (!params_equal (rpe_explorer_state_get_params (a, k), rpe_explorer_state_get_params (b, k), TRUE))
        {
          if (what != NULL)
            *what = g_strdup_printf ("the %s module", k == RPE_SPE_SINE ? "sine" : "conv");
          return FALSE;
        }
      if (g_strcmp0 (rpe_explorer_state_get_source (a, k), rpe_explorer_state_get_source (b, k)) != 0)
        {
          if (what != NULL)
            *what = g_strdup_printf ("the source of the %s module", k == RPE_SPE_SINE ? "sine" : "conv");
          return FALSE;
        }
    }
  wa = rpe_explorer_state_get_fastrpb_weights (a, &ca);
  wb = rpe_explorer_state_get_fastrpb_weights (b, &cb);
  if (ca != cb || !floats_equal (wa, wb, ca))
    {
      if (what != NULL)
        *what = g_strdup ("the FastRPB weights");
      return FALSE;
    }
  {
    const char *la = NULL, *lb = NULL;
    const RpeLrpeTrained *ta = rpe_explorer_state_get_lrpe_trained (a, &la);
    const RpeLrpeTrained *tb = rpe_explorer_state_get_lrpe_trained (b, &lb);

    if ((ta == NULL) != (tb == NULL)
        || (ta != NULL
            && (ta->v_dim != tb->v_dim || ta->n_theta != tb->n_theta || ta->n_pi != tb->n_pi
                || ta->v_learned != tb->v_learned || g_strcmp0 (la, lb) != 0
                || !floats_equal (ta->v, tb->v, ta->v_dim) || !floats_equal (ta->theta, tb->theta, ta->n_theta)
                || (ta->pi == NULL) != (tb->pi == NULL)
                || (ta->pi != NULL && memcmp (ta->pi, tb->pi, ta->n_pi * sizeof (uint32_t)) != 0))))
      {
        if (what != NULL)
          *what = g_strdup ("the trained LRPE parameters");
        return FALSE;
      }
  }
  if (!trained_equal (rpe_explorer_state_get_trained (a), rpe_explorer_state_get_trained (b)))
    {
      if (what != NULL)
        *what = g_strdup ("the trained FastRPB and APE modules");
      return FALSE;
    }
  na = rpe_explorer_state_get_npy_content (a, &nda, sa);
  nb = rpe_explorer_state_get_npy_content (b, &ndb, sb);
  if ((na == NULL) != (nb == NULL)
      || (na != NULL && (nda != ndb || memcmp (sa, sb, sizeof sa) != 0
                         || !floats_equal (na, nb, sa[0] * sa[1] * (nda == 3 ? sa[2] : 1)))))
    {
      if (what != NULL)
        *what = g_strdup ("the loaded content");
      return FALSE;
    }
  {
    RpeExplorerCapture *xa = rpe_explorer_state_get_capture (a), *xb = rpe_explorer_state_get_capture (b);

    if ((xa == NULL) != (xb == NULL)
        || (xa != NULL && (g_strcmp0 (xa->path, xb->path) != 0 || g_strcmp0 (xa->sha256, xb->sha256) != 0)))
      {
        if (what != NULL)
          *what = g_strdup ("the capture");
        return FALSE;
      }
  }
  return TRUE;
}

/* ------------------------------------------------------------- hashing */

/* A file is hashed only if it could be loaded: a regular file no larger than
 * the memory budget (the readers hold a checkpoint or content file whole). */
char *
rpe_session_file_sha256 (const char  *path,
                         GError     **error)
{
  return rpe_file_sha256 (path, rpe_budget_get (), error);
}

static gboolean
is_demo (const char *path)
{
  return rpe_demos_is_builtin (path);
}

/* *path made absolute against the working directory. */
static void
absolute_path (char **path)
{
  if (*path != NULL && !g_path_is_absolute (*path))
    {
      char *abs = g_canonicalize_filename (*path, NULL);

      g_free (*path);
      *path = abs;
    }
}

/* ------------------------------------------------------------- writing */

static void
add_floats (JsonBuilder *b,
            const char  *name,
            const float *v,
            gsize        n)
{
  json_builder_set_member_name (b, name);
  if (v == NULL)
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_array (b);
  for (gsize i = 0; i < n; i++)
    json_builder_add_double_value (b, v[i]);
  json_builder_end_array (b);
}

static void
add_module (JsonBuilder      *b,
            RpeExplorerState *state,
            RpeSpeMethod      kind)
{
  const RpeSpeParams *p = rpe_explorer_state_get_params (state, kind);
  gsize hd, count;

  if (p == NULL)
    return;
  hd = p->n_heads * p->n_features;
  count = hd * (kind == RPE_SPE_SINE ? p->n_sines : p->kernel);
  json_builder_set_member_name (b, kind == RPE_SPE_SINE ? "sine" : "conv");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "source");
  json_builder_add_string_value (b, rpe_explorer_state_get_source (state, kind));
  json_builder_set_member_name (b, "heads");
  json_builder_add_int_value (b, (gint64) p->n_heads);
  json_builder_set_member_name (b, "features");
  json_builder_add_int_value (b, (gint64) p->n_features);
  json_builder_set_member_name (b, kind == RPE_SPE_SINE ? "sines" : "kernel");
  json_builder_add_int_value (b, (gint64) (kind == RPE_SPE_SINE ? p->n_sines : p->kernel));
  if (kind == RPE_SPE_SINE)
    {
      add_floats (b, "freqs", p->freqs, count);
      add_floats (b, "offsets", p->offsets, count);
      add_floats (b, "gains", p->gains, count);
    }
  else
    {
      add_floats (b, "wq", p->wq, count);
      add_floats (b, "wk", p->wk, count);
    }
  add_floats (b, "gate", p->gate, hd);
  json_builder_end_object (b);
}

static gboolean
add_state (JsonBuilder       *b,
           RpeExplorerState  *state,
           GError           **error)
{
  guint n;
  g_autofree GParamSpec **props = session_properties (state, &n);

  json_builder_set_member_name (b, "state");
  json_builder_begin_object (b);
  for (guint i = 0; i < n; i++)
    {
      GValue v = G_VALUE_INIT;
      GType fundamental = G_TYPE_FUNDAMENTAL (props[i]->value_type);
      gboolean ok = TRUE;

      g_value_init (&v, props[i]->value_type);
      g_object_get_property (G_OBJECT (state), props[i]->name, &v);
      json_builder_set_member_name (b, props[i]->name);
      switch (fundamental)
        {
        case G_TYPE_BOOLEAN:
          json_builder_add_boolean_value (b, g_value_get_boolean (&v));
          break;
        case G_TYPE_INT:
          json_builder_add_int_value (b, g_value_get_int (&v));
          break;
        case G_TYPE_UINT:
          json_builder_add_int_value (b, g_value_get_uint (&v));
          break;
        case G_TYPE_INT64:
          json_builder_add_int_value (b, g_value_get_int64 (&v));
          break;
        case G_TYPE_UINT64:
          ok = g_value_get_uint64 (&v) <= G_MAXINT64;
          json_builder_add_int_value (b, (gint64) g_value_get_uint64 (&v));
          break;
        case G_TYPE_ENUM:
          json_builder_add_int_value (b, g_value_get_enum (&v));
          break;
        case G_TYPE_FLAGS:
          json_builder_add_int_value (b, g_value_get_flags (&v));
          break;
        case G_TYPE_FLOAT:
        case G_TYPE_DOUBLE:
          {
            double d = fundamental == G_TYPE_FLOAT ? g_value_get_float (&v) : g_value_get_double (&v);

            /* JSON has no NaN: a property that means "automatic" by NaN is written as a string */
            if (isfinite (d))
              json_builder_add_double_value (b, d);
            else
              json_builder_add_string_value (b, isnan (d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
          }
          break;
        case G_TYPE_STRING:
          if (g_value_get_string (&v) != NULL)
            json_builder_add_string_value (b, g_value_get_string (&v));
          else
            json_builder_add_null_value (b);
          break;
        default:
          ok = FALSE;
          json_builder_add_null_value (b);
          break;
        }
      g_value_unset (&v);
      if (!ok)
        {
          json_builder_end_object (b);
          return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                                "the setting “%s” cannot be written to a session", props[i]->name);
        }
    }
  json_builder_end_object (b);
  return TRUE;
}

static void
add_string (JsonBuilder *b,
            const char  *name,
            const char  *value)
{
  json_builder_set_member_name (b, name);
  if (value != NULL)
    json_builder_add_string_value (b, value);
  else
    json_builder_add_null_value (b);
}

static void write_capture (JsonBuilder      *b,
                           RpeExplorerState *state);

/* Whether FASTRPB draws the held checkpoint's trained bias (`rpe export --checkpoint` draws it too). */
static gboolean
fastrpb_trained_on (RpeExplorerState *st)
{
  gboolean on = FALSE;

  g_object_get (st, "fastrpb-trained", &on, NULL);
  return on;
}

/* "trained-modules": a checkpoint's FastRPB biases and learned APE, the values themselves:
 *   { "source", "heads", "dim", "fastrpb": [ { "layer" (null: not known), "prefix", "taps" M,
 *     "w" H (2M - 1) floats } ], "ape": { "positions" P, "w" P H D floats } | null } | absent */
static void
write_trained (JsonBuilder *b, const RpeExplorerTrained *t)
{
  if (t == NULL)
    return;
  json_builder_set_member_name (b, "trained-modules");
  json_builder_begin_object (b);
  add_string (b, "source", t->source);
  json_builder_set_member_name (b, "heads");
  json_builder_add_int_value (b, (gint64) t->heads);
  json_builder_set_member_name (b, "dim");
  json_builder_add_int_value (b, (gint64) t->dim);
  json_builder_set_member_name (b, "fastrpb");
  json_builder_begin_array (b);
  for (guint i = 0; i < t->n_fastrpb; i++)
    {
      const RpeExplorerFastrpbLayer *l = &t->fastrpb[i];

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "layer");
      if (l->layer == RPE_EXPLORER_TRAINED_NO_LAYER)
        json_builder_add_null_value (b);
      else
        json_builder_add_int_value (b, l->layer);
      add_string (b, "prefix", l->prefix);
      json_builder_set_member_name (b, "taps");
      json_builder_add_int_value (b, (gint64) l->taps);
      add_floats (b, "w", l->w, t->heads * (2 * l->taps - 1));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "ape");
  if (t->ape == NULL)
    json_builder_add_null_value (b);
  else
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "positions");
      json_builder_add_int_value (b, (gint64) t->ape_positions);
      add_floats (b, "w", t->ape, t->ape_positions * t->heads * t->dim);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
}

static gboolean
trained_equal (const RpeExplorerTrained *a, const RpeExplorerTrained *b)
{
  if (a == b)
    return TRUE;
  if (a == NULL || b == NULL || a->heads != b->heads || a->dim != b->dim || a->n_fastrpb != b->n_fastrpb
      || a->ape_positions != b->ape_positions || (a->ape == NULL) != (b->ape == NULL)
      || g_strcmp0 (a->source, b->source) != 0)
    return FALSE;
  for (guint i = 0; i < a->n_fastrpb; i++)
    if (a->fastrpb[i].layer != b->fastrpb[i].layer || a->fastrpb[i].taps != b->fastrpb[i].taps
        || g_strcmp0 (a->fastrpb[i].prefix, b->fastrpb[i].prefix) != 0
        || memcmp (a->fastrpb[i].w, b->fastrpb[i].w, a->heads * (2 * a->fastrpb[i].taps - 1) * sizeof (float)) != 0)
      return FALSE;
  return a->ape == NULL || memcmp (a->ape, b->ape, a->ape_positions * a->heads * a->dim * sizeof (float)) == 0;
}

char *
rpe_session_to_data (RpeSession  *session,
                     gsize       *length,
                     GError     **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = NULL;
  g_autoptr (JsonNode) root = NULL;
  const float *w, *npy;
  gsize count, ndim, shape[3];

  g_return_val_if_fail (session != NULL && session->state != NULL, NULL);

  /* the files by absolute path (a relative one is read against the session's
   * folder), with their hashes as they are now */
  if (session->checkpoint.path != NULL && !is_demo (session->checkpoint.path))
    {
      absolute_path (&session->checkpoint.path);
      g_free (session->checkpoint.sha256);
      session->checkpoint.sha256 = rpe_session_file_sha256 (session->checkpoint.path, NULL);
    }
  if (session->content_path != NULL)
    {
      absolute_path (&session->content_path);
      g_free (session->content_sha256);
      session->content_sha256 = rpe_session_file_sha256 (session->content_path, NULL);
    }
  if (session->outputs.have && session->outputs.values_path != NULL)
    {
      absolute_path (&session->outputs.values_path);
      g_free (session->outputs.values_sha256);
      session->outputs.values_sha256 = rpe_session_file_sha256 (session->outputs.values_path, NULL);
    }

  json_builder_begin_object (b);
  add_string (b, "format", RPE_SESSION_FORMAT);
  json_builder_set_member_name (b, "version");
  json_builder_add_int_value (b, RPE_SESSION_VERSION);
  add_string (b, "generator", "RPE Studio " PACKAGE_VERSION);
  add_string (b, "view", session->view);
  json_builder_set_member_name (b, "template-cell");
  json_builder_add_int_value (b, session->template_cell);
  if (!add_state (b, session->state, error))
    return NULL;

  json_builder_set_member_name (b, "modules");
  json_builder_begin_object (b);
  add_module (b, session->state, RPE_SPE_SINE);
  add_module (b, session->state, RPE_SPE_CONV);
  json_builder_end_object (b);

  w = rpe_explorer_state_get_fastrpb_weights (session->state, &count);
  add_floats (b, "fastrpb-weights", w, count);

  /* trained LRPE parameters (a checkpoint's module, .npy files): the values themselves */
  {
    const char *label = NULL;
    const RpeLrpeTrained *t = rpe_explorer_state_get_lrpe_trained (session->state, &label);

    if (t != NULL)
      {
        json_builder_set_member_name (b, "lrpe-trained-parameters");
        json_builder_begin_object (b);
        add_string (b, "source", label);
        add_floats (b, "v", t->v, t->v_dim);
        json_builder_set_member_name (b, "v-learned");
        json_builder_add_boolean_value (b, t->v_learned);
        add_floats (b, "theta", t->theta, t->n_theta);
        json_builder_set_member_name (b, "pi");
        if (t->pi == NULL)
          json_builder_add_null_value (b);
        else
          {
            json_builder_begin_array (b);
            for (gsize i = 0; i < t->n_pi; i++)
              json_builder_add_int_value (b, t->pi[i]);
            json_builder_end_array (b);
          }
        json_builder_end_object (b);
      }
  }

  write_trained (b, rpe_explorer_state_get_trained (session->state));

  json_builder_set_member_name (b, "content");
  npy = rpe_explorer_state_get_npy_content (session->state, &ndim, shape);
  if (npy == NULL)
    json_builder_add_null_value (b);
  else
    {
      json_builder_begin_object (b);
      add_string (b, "path", session->content_path);
      add_string (b, "sha256", session->content_sha256);
      json_builder_set_member_name (b, "shape");
      json_builder_begin_array (b);
      for (gsize i = 0; i < ndim; i++)
        json_builder_add_int_value (b, (gint64) shape[i]);
      json_builder_end_array (b);
      /* without a file to name, the values themselves */
      if (session->content_path == NULL)
        add_floats (b, "data", npy, shape[0] * shape[1] * (ndim == 3 ? shape[2] : 1));
      json_builder_end_object (b);
    }

  write_capture (b, session->state);

  json_builder_set_member_name (b, "outputs");
  if (!session->outputs.have)
    json_builder_add_null_value (b);
  else
    {
      const RpeSessionOutputs *x = &session->outputs;

      json_builder_begin_object (b);
      add_string (b, "values", outputs_values_names[x->values]);
      json_builder_set_member_name (b, "channels");
      json_builder_add_int_value (b, x->channels);
      add_string (b, "impulse-positions", x->positions != NULL ? x->positions : "");
      add_string (b, "compare", outputs_compare_names[x->compare]);
      json_builder_set_member_name (b, "channel");
      json_builder_add_int_value (b, x->channel);
      json_builder_set_member_name (b, "several-draws");
      json_builder_add_boolean_value (b, x->several_draws);
      json_builder_set_member_name (b, "captured-values");
      json_builder_add_boolean_value (b, x->captured);
      json_builder_set_member_name (b, "values-file");
      if (x->values_path == NULL)
        json_builder_add_null_value (b);
      else
        {
          json_builder_begin_object (b);
          add_string (b, "path", x->values_path);
          add_string (b, "sha256", x->values_sha256);
          json_builder_end_object (b);
        }
      json_builder_end_object (b);
    }

  json_builder_set_member_name (b, "checkpoint");
  if (session->checkpoint.path == NULL)
    json_builder_add_null_value (b);
  else
    {
      json_builder_begin_object (b);
      add_string (b, "path", session->checkpoint.path);
      add_string (b, "sha256", session->checkpoint.sha256);
      add_string (b, "prefix", session->checkpoint.prefix);
      json_builder_set_member_name (b, "layer");
      json_builder_add_int_value (b, session->checkpoint.layer);
      json_builder_set_member_name (b, "map");
      json_builder_begin_array (b);
      for (char **m = session->checkpoint.map; m != NULL && *m != NULL; m++)
        json_builder_add_string_value (b, *m);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }

  json_builder_set_member_name (b, "viewport");
  if (!session->have_viewport)
    json_builder_add_null_value (b);
  else
    {
      json_builder_begin_array (b);
      for (int i = 0; i < 4; i++)
        json_builder_add_double_value (b, session->viewport[i]);
      json_builder_end_array (b);
    }

  json_builder_set_member_name (b, "export");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "length");
  json_builder_add_int_value (b, session->export_length);
  json_builder_set_member_name (b, "width");
  json_builder_add_double_value (b, session->export_width);
  json_builder_set_member_name (b, "height");
  json_builder_add_double_value (b, session->export_height);
  json_builder_set_member_name (b, "dpi");
  json_builder_add_double_value (b, session->export_dpi);
  add_string (b, "title", session->export_title);
  json_builder_set_member_name (b, "options");
  json_builder_begin_array (b);
  for (char **e = session->export_options; e != NULL && *e != NULL; e++)
    json_builder_add_string_value (b, *e);
  json_builder_end_array (b);
  json_builder_end_object (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  gen = json_generator_new ();
  json_generator_set_pretty (gen, TRUE);
  json_generator_set_indent (gen, 1);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, length);
}

gboolean
rpe_session_save (RpeSession  *session,
                  const char  *path,
                  GError     **error)
{
  g_autofree char *data = NULL;
  gsize length = 0;

  g_return_val_if_fail (session != NULL, FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  data = rpe_session_to_data (session, &length, error);
  if (data == NULL)
    return FALSE;
  /* as every output: a temporary file renamed over the old one (with the command's other
   * outputs, in an output set), written through a symbolic link */
  if (!rpe_atomic_file_set_contents (path, data, length, error))
    return FALSE;
  g_free (session->file);
  session->file = g_canonicalize_filename (path, NULL);
  return TRUE;
}

/* ------------------------------------------------------------- reading */

static gboolean
bad (GError     **error,
     const char  *format,
     ...) G_GNUC_PRINTF (2, 3);

static gboolean
bad (GError     **error,
     const char  *format,
     ...)
{
  va_list args;
  g_autofree char *msg = NULL;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT, "Not a valid session: %s", msg);
  return FALSE;
}

/* The pre-scan: a strict JSON lexer (RFC 8259 tokens, plus // and / *...* /
 * comments) that runs before json-glib sees the text.  json-glib's own scanner
 * accepts more than JSON and reads some of it differently from any JSON lexer
 * ('/.../' is a comment to it, '…' a string, "\u12" swallows the character after
 * it), so a depth count that guesses its reading can be fooled into letting a
 * deep nesting through to its recursive parser.  Instead, the text must be JSON
 * that every lexer reads the same way: comments are blanked out (in a copy),
 * and anything else that is not strict JSON is refused here.  On that text the
 * depth counted here is the depth json-glib recurses to.
 *
 * The scan also counts what json-glib will build (one node per value, member
 * name and container, and the bytes of the strings), so that the parse is
 * refused up front when its tree would not fit in the memory budget. */
typedef struct
{
  gsize tokens;          /* values, member names and containers */
  gsize string_bytes;    /* bytes inside strings, as written */
  gboolean comments;     /* the text holds comments (blanked in the copy) */
} ScanStats;

/* Line and column (1-based, in characters) of byte `at`. */
static void
scan_position (const char *data,
               gsize       at,
               gsize      *line,
               gsize      *column)
{
  *line = *column = 1;
  for (gsize i = 0; i < at; i++)
    {
      if (data[i] == '\n')
        {
          (*line)++;
          *column = 1;
        }
      else if (((guchar) data[i] & 0xC0) != 0x80)
        (*column)++;
    }
}

/* What is not JSON, with its place. */
static gboolean
scan_fail (GError     **error,
           const char  *data,
           gsize        at,
           const char  *format,
           ...) G_GNUC_PRINTF (4, 5);

static gboolean
scan_fail (GError     **error,
           const char  *data,
           gsize        at,
           const char  *format,
           ...)
{
  va_list args;
  g_autofree char *msg = NULL;
  gsize line, column;

  scan_position (data, at, &line, &column);
  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT, "Not a session file: it is not JSON (line %zu, column %zu: %s)",
               (size_t) line, (size_t) column, msg);
  return FALSE;
}

/* JSON over one of our limits, with its place. */
static gboolean
scan_limit (GError     **error,
            const char  *data,
            gsize        at,
            const char  *what)
{
  gsize line, column;

  scan_position (data, at, &line, &column);
  g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT, "Not a valid session (line %zu, column %zu): %s",
               (size_t) line, (size_t) column, what);
  return FALSE;
}

static int
hex_value (char c)
{
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The 4 hex digits of a \u escape at data[i] (after the 'u'), or -1. */
static long
scan_u4 (const char *data,
         gsize       length,
         gsize       i)
{
  long v = 0;

  if (length - i < 4)
    return -1;
  for (int k = 0; k < 4; k++)
    {
      int h = hex_value (data[i + k]);

      if (h < 0)
        return -1;
      v = v * 16 + h;
    }
  return v;
}

/* A string starting at data[*i] (the opening quote); *i ends after the closing one. */
static gboolean
scan_string (const char  *data,
             gsize        length,
             gsize       *i,
             ScanStats   *stats,
             GError     **error)
{
  gsize start = *i, j = *i + 1, decoded = 0;

  /* `decoded`: the bytes of the string's value (what the limit is on: json-glib
   * writes some characters as escapes, "\u007f" for DEL, so a value read back
   * must not count its escapes) */
  while (j < length && data[j] != '"')
    {
      guchar c = (guchar) data[j];

      if (c < 0x20)
        return scan_fail (error, data, j, c == 0 ? "a NUL byte" : "a control character inside a string (write it as "
                          "an escape)");
      if (c != '\\')
        {
          j++;
          decoded++;
          continue;
        }
      if (j + 1 >= length)
        {
          j = length;                  /* a backslash ends the text: the string does not end */
          break;
        }
      switch (data[j + 1])
        {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
          j += 2;
          decoded++;
          break;
        case 'u':
          {
            long u = scan_u4 (data, length, j + 2);

            if (u < 0)
              return scan_fail (error, data, j, "“\\u” must be followed by 4 hexadecimal digits");
            /* a NUL would cut the value short where it is used as a name or path */
            if (u == 0)
              return scan_fail (error, data, j, "a NUL character (\\u0000) in a string");
            /* a UTF-16 surrogate only as a whole pair */
            if (u >= 0xDC00 && u <= 0xDFFF)
              return scan_fail (error, data, j, "a lone low surrogate \\u%04lX", u);
            if (u >= 0xD800 && u <= 0xDBFF)
              {
                long low = j + 7 < length && data[j + 6] == '\\' && data[j + 7] == 'u'
                           ? scan_u4 (data, length, j + 8) : -1;

                if (low < 0xDC00 || low > 0xDFFF)
                  return scan_fail (error, data, j, "the high surrogate \\u%04lX is not followed by a low one", u);
                j += 6;
                decoded += 1;          /* 4 bytes with the 3 below */
              }
            j += 6;
            decoded += u < 0x80 ? 1 : u < 0x800 ? 2 : 3;
          }
          break;
        default:
          return scan_fail (error, data, j, "an unknown escape in a string");
        }
    }
  if (j >= length)
    return scan_fail (error, data, start, "a string that does not end");
  if (decoded > RPE_SESSION_MAX_STRING)
    {
      g_autofree char *what = g_strdup_printf ("a string of %zu bytes (at most %u)", (size_t) decoded,
                                               RPE_SESSION_MAX_STRING);

      return scan_limit (error, data, start, what);
    }
  stats->string_bytes += j - start - 1;
  *i = j + 1;
  return TRUE;
}

/* A number (RFC 8259 grammar) at data[*i]. */
static gboolean
scan_number (const char  *data,
             gsize        length,
             gsize       *i,
             GError     **error)
{
  gsize j = *i, digits;

  if (data[j] == '-')
    j++;
  digits = j;
  if (j < length && data[j] == '0')
    j++;
  else
    while (j < length && g_ascii_isdigit (data[j]))
      j++;
  if (j == digits)
    return scan_fail (error, data, *i, "a number without digits");
  if (j < length && data[j] == '.')
    {
      digits = ++j;
      while (j < length && g_ascii_isdigit (data[j]))
        j++;
      if (j == digits)
        return scan_fail (error, data, *i, "a number without digits after its point");
    }
  if (j < length && (data[j] == 'e' || data[j] == 'E'))
    {
      j++;
      if (j < length && (data[j] == '+' || data[j] == '-'))
        j++;
      digits = j;
      while (j < length && g_ascii_isdigit (data[j]))
        j++;
      if (j == digits)
        return scan_fail (error, data, *i, "a number without digits in its exponent");
    }
  if (j < length && (g_ascii_isalnum (data[j]) || data[j] == '.' || data[j] == '_'))
    return scan_fail (error, data, *i, "a malformed number");
  *i = j;
  return TRUE;
}

/* Scans data; on success *clean is NULL (the text is strict JSON as it is) or
 * a copy with the comments blanked (caller frees). */
static gboolean
prescan (const char  *data,
         gsize        length,
         char       **clean,
         ScanStats   *stats,
         GError     **error)
{
  static const char *const words[] = { "true", "false", "null" };
  int depth = 0;
  gsize i = 0;

  *clean = NULL;
  memset (stats, 0, sizeof *stats);
  while (i < length)
    {
      char ch = data[i];

      switch (ch)
        {
        case ' ': case '\t': case '\n': case '\r': case ':': case ',':
          i++;
          break;
        case '[': case '{':
          if (++depth > MAX_DEPTH)
            {
              g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT,
                           "Not a valid session: the JSON is nested more than %d levels deep", MAX_DEPTH);
              return FALSE;
            }
          stats->tokens++;
          i++;
          break;
        case ']': case '}':
          if (--depth < 0)
            return scan_fail (error, data, i, "“%c” closes nothing", ch);
          i++;
          break;
        case '"':
          stats->tokens++;
          if (!scan_string (data, length, &i, stats, error))
            return FALSE;
          break;
        case '/':
          {
            if (i + 1 < length && data[i + 1] == '/')
              {
                while (i < length && data[i] != '\n')
                  i++;
              }
            else if (i + 1 < length && data[i + 1] == '*')
              {
                gsize k = i + 2;

                while (k + 1 < length && !(data[k] == '*' && data[k + 1] == '/'))
                  k++;
                if (k + 1 >= length)
                  return scan_fail (error, data, i, "a comment that does not end");
                i = k + 2;
              }
            else
              return scan_fail (error, data, i, "a “/” outside a string or comment");
            stats->comments = TRUE;
          }
          break;
        default:
          if (ch == '-' || g_ascii_isdigit (ch))
            {
              if (!scan_number (data, length, &i, error))
                return FALSE;
              stats->tokens++;
              break;
            }
          {
            gboolean known = FALSE;

            for (gsize w = 0; w < G_N_ELEMENTS (words) && !known; w++)
              {
                gsize wl = strlen (words[w]);

                if (length - i >= wl && memcmp (data + i, words[w], wl) == 0
                    && (length - i == wl || !g_ascii_isalnum (data[i + wl])))
                  {
                    i += wl;
                    known = TRUE;
                  }
              }
            if (!known)
              {
                if (ch == '\0')
                  return scan_fail (error, data, i, "a NUL byte");
                if ((guchar) ch >= 0x20 && (guchar) ch < 0x7F)
                  return scan_fail (error, data, i, "unexpected “%c”", ch);
                return scan_fail (error, data, i, "unexpected byte 0x%02X", (guint) (guchar) ch);
              }
            stats->tokens++;
          }
          break;
        }
    }
  if (depth != 0)
    return scan_fail (error, data, length, "an object or array that does not end");
  if (stats->comments)
    {
      char *copy;

      if (rpe_budget_check (length) != RPE_OK || (copy = g_try_malloc (length + 1)) == NULL)
        {
          g_set_error (error, RPE_ERROR, RPE_ERROR_NO_MEMORY,
                       "Reading the session needs a copy of its %zu bytes, more than the memory budget or "
                       "the memory available", (size_t) length);
          return FALSE;
        }
      memcpy (copy, data, length);
      copy[length] = '\0';
      /* the comments blanked (the text is valid now: strings, then comments), with
       * the line breaks kept so that json-glib's positions stay true */
      for (gsize k = 0; k < length;)
        {
          if (copy[k] == '"')
            {
              for (k++; k < length && copy[k] != '"'; k++)
                if (copy[k] == '\\')
                  k++;
              k++;
            }
          else if (copy[k] == '/' && k + 1 < length && copy[k + 1] == '/')
            for (; k < length && copy[k] != '\n'; k++)
              copy[k] = ' ';
          else if (copy[k] == '/' && k + 1 < length)
            {
              copy[k] = copy[k + 1] = ' ';
              for (k += 2; k + 1 < length && !(copy[k] == '*' && copy[k + 1] == '/'); k++)
                if (copy[k] != '\n')
                  copy[k] = ' ';
              for (gsize e = k; e < k + 2 && e < length; e++)
                copy[e] = ' ';
              k += 2;
            }
          else
            k++;
        }
      *clean = copy;
    }
  return TRUE;
}

/* The memory json-glib's tree of a scanned text takes (measured on json-glib
 * 1.6: about 80 bytes per number, 115 per short string or member name, 120 per
 * empty container, 2 bytes per string byte), with a margin. */
#define JSON_NODE_BYTES   160u
#define JSON_STRING_COST  3u

static gboolean
prescan_budget (gsize             length,
                const ScanStats  *stats,
                GError          **error)
{
  gsize need = length, part;

  if (!rpe_size_mul (stats->tokens, JSON_NODE_BYTES, &part) || !rpe_size_add (need, part, &need)
      || !rpe_size_mul (stats->string_bytes, JSON_STRING_COST, &part) || !rpe_size_add (need, part, &need)
      || (stats->comments && !rpe_size_add (need, length, &need))
      || rpe_budget_check (need) != RPE_OK)
    {
      g_autofree char *need_text = g_format_size_full (need, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *budget_text = g_format_size_full (rpe_budget_get (), G_FORMAT_SIZE_IEC_UNITS);

      g_set_error (error, RPE_ERROR, RPE_ERROR_NO_MEMORY,
                   "Reading the session (%zu values) needs about %s, more than the memory budget of %s",
                   (size_t) stats->tokens, need_text, budget_text);
      return FALSE;
    }
  return TRUE;
}

static JsonNode *
member (JsonObject *o,
        const char *name,
        JsonNodeType type)
{
  JsonNode *n = o != NULL ? json_object_get_member (o, name) : NULL;

  return n != NULL && JSON_NODE_TYPE (n) == type ? n : NULL;
}

static gboolean
get_number (JsonNode *n,
            double   *out)
{
  GType t;

  if (n == NULL || JSON_NODE_TYPE (n) != JSON_NODE_VALUE)
    return FALSE;
  t = json_node_get_value_type (n);
  if (t == G_TYPE_INT64)
    *out = (double) json_node_get_int (n);
  else if (t == G_TYPE_DOUBLE)
    *out = json_node_get_double (n);
  else
    return FALSE;
  return isfinite (*out);
}

/* An integer member in [lo, hi]. */
static gboolean
get_int (JsonObject  *o,
         const char  *name,
         gint64       lo,
         gint64       hi,
         gint64      *out,
         const char  *where,
         GError     **error)
{
  JsonNode *n = json_object_get_member (o, name);
  double v;

  if (n == NULL)
    return bad (error, "%s has no “%s”", where, name);
  if (!get_number (n, &v) || v != floor (v))
    return bad (error, "“%s” of %s must be a whole number", name, where);
  if (v < (double) lo || v > (double) hi)
    return bad (error, "“%s” of %s is out of range: %.0f (allowed %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT ")",
                name, where, v, lo, hi);
  *out = (gint64) v;
  return TRUE;
}

/* A float array of exactly `count` finite values in [lo, hi] (NULL allowed if nullable). */
static gboolean
get_floats (JsonObject  *o,
            const char  *name,
            gsize        count,
            double       lo,
            double       hi,
            gboolean     nullable,
            float      **out,
            const char  *where,
            GError     **error)
{
  JsonNode *n = json_object_get_member (o, name);
  JsonArray *a;
  RpeStatus st;

  *out = NULL;
  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    {
      if (nullable)
        return TRUE;
      return bad (error, "%s has no “%s”", where, name);
    }
  if (!JSON_NODE_HOLDS_ARRAY (n))
    return bad (error, "“%s” of %s must be an array of numbers", name, where);
  a = json_node_get_array (n);
  if (json_array_get_length (a) != count)
    return bad (error, "“%s” of %s holds %u values; its shape needs %zu", name, where,
                json_array_get_length (a), (size_t) count);
  *out = rpe_alloc (MAX (count, 1), sizeof (float), &st);
  if (*out == NULL)
    return rpe_set_error (error, st, "%s", rpe_status_to_string (st));
  for (gsize i = 0; i < count; i++)
    {
      double v;

      if (!get_number (json_array_get_element (a, (guint) i), &v) || !isfinite ((float) v))
        {
          g_clear_pointer (out, rpe_free);
          return bad (error, "“%s” of %s: value %zu is not a finite number", name, where, (size_t) i);
        }
      if (v < lo || v > hi)
        {
          g_clear_pointer (out, rpe_free);
          return bad (error, "“%s” of %s: value %zu (%g) is out of range [%g, %g]", name, where, (size_t) i,
                      v, lo, hi);
        }
      (*out)[i] = (float) v;
    }
  return TRUE;
}

static gboolean
read_module (JsonObject       *modules,
             RpeSpeMethod      kind,
             RpeExplorerState *state,
             GError          **error)
{
  const char *name = kind == RPE_SPE_SINE ? "sine" : "conv";
  g_autofree char *where = g_strdup_printf ("the %s module", name);
  JsonNode *n = modules != NULL ? json_object_get_member (modules, name) : NULL;
  JsonObject *o;
  RpeSpeParams p = { 0 };
  gint64 heads, features, size;
  gsize hd, count;
  const char *source = NULL;
  gboolean ok = FALSE;

  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (n))
    return bad (error, "%s must be an object", where);
  o = json_node_get_object (n);
  if (!get_int (o, "heads", 1, MAX_HEADS, &heads, where, error)
      || !get_int (o, "features", 1, MAX_FEATURES, &features, where, error)
      || !get_int (o, kind == RPE_SPE_SINE ? "sines" : "kernel", 1, kind == RPE_SPE_SINE ? MAX_SIZE : 4096, &size,
                   where, error))
    return FALSE;
  if (!rpe_size_mul ((gsize) heads, (gsize) features, &hd) || !rpe_size_mul (hd, (gsize) size, &count)
      || count > MAX_VALUES)
    return bad (error, "%s is too large (%" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT ")",
                where, heads, features, size);
  if (member (o, "source", JSON_NODE_VALUE) != NULL)
    source = json_node_get_string (json_object_get_member (o, "source"));
  p.method = kind;
  p.n_heads = (size_t) heads;
  p.n_features = (size_t) features;
  if (kind == RPE_SPE_SINE)
    {
      p.n_sines = (size_t) size;
      if (!get_floats (o, "freqs", count, 0.0, 0.5, FALSE, &p.freqs, where, error)
          || !get_floats (o, "offsets", count, -G_MAXFLOAT, G_MAXFLOAT, FALSE, &p.offsets, where, error)
          || !get_floats (o, "gains", count, 0.0, G_MAXFLOAT, FALSE, &p.gains, where, error))
        goto out;
    }
  else
    {
      p.kernel = (size_t) size;
      if (!get_floats (o, "wq", count, -G_MAXFLOAT, G_MAXFLOAT, FALSE, &p.wq, where, error)
          || !get_floats (o, "wk", count, -G_MAXFLOAT, G_MAXFLOAT, FALSE, &p.wk, where, error))
        goto out;
    }
  if (!get_floats (o, "gate", hd, 0.0, 1.0, TRUE, &p.gate, where, error))
    goto out;
  ok = kind == RPE_SPE_SINE ? rpe_explorer_state_set_modules (state, &p, source, NULL, NULL, error)
                            : rpe_explorer_state_set_modules (state, NULL, NULL, &p, source, error);
out:
  rpe_spe_params_clear (&p);
  return ok;
}

/* A state property from its JSON value; out-of-range values are refused. */
static gboolean
read_property (RpeExplorerState *state,
               GParamSpec       *pspec,
               JsonNode         *n,
               GError          **error)
{
  GValue v = G_VALUE_INIT;
  GType fundamental = G_TYPE_FUNDAMENTAL (pspec->value_type);
  double num = 0.0;
  gboolean ok = TRUE;

  g_value_init (&v, pspec->value_type);
  switch (fundamental)
    {
    case G_TYPE_BOOLEAN:
      ok = JSON_NODE_TYPE (n) == JSON_NODE_VALUE && json_node_get_value_type (n) == G_TYPE_BOOLEAN;
      if (ok)
        g_value_set_boolean (&v, json_node_get_boolean (n));
      break;
    case G_TYPE_STRING:
      ok = JSON_NODE_HOLDS_NULL (n)
           || (JSON_NODE_TYPE (n) == JSON_NODE_VALUE && json_node_get_value_type (n) == G_TYPE_STRING);
      if (ok)
        g_value_set_string (&v, JSON_NODE_HOLDS_NULL (n) ? NULL : json_node_get_string (n));
      break;
    case G_TYPE_FLOAT:
    case G_TYPE_DOUBLE:
      ok = get_number (n, &num);
      if (!ok && JSON_NODE_TYPE (n) == JSON_NODE_VALUE && json_node_get_value_type (n) == G_TYPE_STRING)
        {
          /* a non-finite value only where the property's own default is one (it means "automatic") */
          const char *t = json_node_get_string (n);
          double def = fundamental == G_TYPE_FLOAT ? G_PARAM_SPEC_FLOAT (pspec)->default_value
                                                   : G_PARAM_SPEC_DOUBLE (pspec)->default_value;

          num = g_str_equal (t, "NaN") ? NAN : g_str_equal (t, "Infinity") ? INFINITY
                : g_str_equal (t, "-Infinity") ? -INFINITY : 0.0;
          ok = !isfinite (def) && !isfinite (num)
               && (isnan (num) ? isnan (def) : num == def);
        }
      if (ok && fundamental == G_TYPE_FLOAT)
        g_value_set_float (&v, (float) num);
      else if (ok)
        g_value_set_double (&v, num);
      break;
    case G_TYPE_INT:
    case G_TYPE_UINT:
    case G_TYPE_INT64:
    case G_TYPE_UINT64:
    case G_TYPE_ENUM:
    case G_TYPE_FLAGS:
      ok = get_number (n, &num) && num == floor (num) && fabs (num) < 9.0e15;
      if (!ok)
        break;
      /* a value outside the type itself is out of range too */
      if (fundamental == G_TYPE_INT && (num < G_MININT || num > G_MAXINT))
        return bad (error, "“%s” is out of range: %.0f", pspec->name, num);
      if ((fundamental == G_TYPE_UINT || fundamental == G_TYPE_FLAGS) && (num < 0 || num > G_MAXUINT))
        return bad (error, "“%s” is out of range: %.0f", pspec->name, num);
      if (fundamental == G_TYPE_UINT64 && num < 0)
        return bad (error, "“%s” is out of range: %.0f", pspec->name, num);
      if (fundamental == G_TYPE_ENUM && (num < G_MININT || num > G_MAXINT))
        return bad (error, "“%s” is out of range: %.0f", pspec->name, num);
      switch (fundamental)
        {
        case G_TYPE_INT:    g_value_set_int (&v, (int) num); break;
        case G_TYPE_UINT:   g_value_set_uint (&v, (guint) num); break;
        case G_TYPE_INT64:  g_value_set_int64 (&v, (gint64) num); break;
        case G_TYPE_UINT64: g_value_set_uint64 (&v, (guint64) num); break;
        case G_TYPE_ENUM:   g_value_set_enum (&v, (int) num); break;
        default:            g_value_set_flags (&v, (guint) num); break;
        }
      break;
    default:
      ok = FALSE;
      break;
    }
  if (!ok)
    {
      g_value_unset (&v);
      return bad (error, "“%s” has a value of the wrong type", pspec->name);
    }
  /* the pspec's range: validation changing the value means it was outside */
  {
    GValue checked = G_VALUE_INIT;

    g_value_init (&checked, pspec->value_type);
    g_value_copy (&v, &checked);
    if (g_param_value_validate (pspec, &checked))
      {
        g_autofree char *text = g_strdup_value_contents (&v);

        g_value_unset (&checked);
        g_value_unset (&v);
        return bad (error, "“%s” is out of range: %s", pspec->name, text);
      }
    g_value_unset (&checked);
  }
  /* a colour map is one of the app's, by name: an unknown one would be drawn as the default */
  if (g_str_equal (pspec->name, "colormap")
      && (g_value_get_string (&v) == NULL || rpe_colormap_lookup (g_value_get_string (&v)) == NULL))
    {
      g_autofree char *shown = rpe_escape_name (g_value_get_string (&v) != NULL ? g_value_get_string (&v) : "null");

      g_value_unset (&v);
      return bad (error, "unknown colour map “%s”", shown);
    }
  g_object_set_property (G_OBJECT (state), pspec->name, &v);
  g_value_unset (&v);
  return TRUE;
}

/* A file named by the session: as written (a relative path against the
 * session file's folder, or the working directory for a session read from
 * memory), else the same name beside the session file (a moved folder).  NULL
 * if neither is a regular file. */
static char *
locate (const char  *path,
        const char  *session_file,
        const char  *what,
        GPtrArray   *warnings)
{
  g_autofree char *base = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *written = NULL;
  g_autofree char *beside = NULL;

  dir = session_file != NULL ? g_path_get_dirname (session_file) : NULL;
  written = g_path_is_absolute (path) || dir == NULL ? g_strdup (path) : g_build_filename (dir, path, NULL);
  if (g_file_test (written, G_FILE_TEST_IS_REGULAR))
    return g_steal_pointer (&written);
  if (dir == NULL)
    return NULL;
  base = g_path_get_basename (path);
  beside = g_build_filename (dir, base, NULL);
  if (!g_file_test (beside, G_FILE_TEST_IS_REGULAR))
    return NULL;
  g_ptr_array_add (warnings, g_strdup_printf ("The %s “%s” was not found; using “%s” beside the session.",
                                              what, path, beside));
  return g_steal_pointer (&beside);
}

/* The saved hash against the file as it is now: a note when it differs, or
 * when the file cannot be hashed (then it is not compared). */
static void
check_hash (const char *path,
            const char *sha256,
            const char *what,
            GPtrArray  *warnings)
{
  g_autofree char *now = NULL;
  g_autoptr (GError) error = NULL;

  if (sha256 == NULL)
    return;
  now = rpe_session_file_sha256 (path, &error);
  if (now == NULL)
    g_ptr_array_add (warnings, g_strdup_printf ("The %s “%s” was not compared with its saved SHA-256: %s",
                                                what, path, error->message));
  else if (g_ascii_strcasecmp (now, sha256) != 0)
    g_ptr_array_add (warnings, g_strdup_printf ("The %s “%s” has changed since the session was saved "
                                                "(its SHA-256 differs); the session's saved parameters are shown.",
                                                what, path));
}

static const char *
opt_string (JsonObject *o,
            const char *name)
{
  JsonNode *n = member (o, name, JSON_NODE_VALUE);

  return n != NULL && json_node_get_value_type (n) == G_TYPE_STRING ? json_node_get_string (n) : NULL;
}

/* "outputs": the Outputs view's settings, every value checked (absent or null: none). */
/* ---- captures: by path and SHA-256, like the checkpoint ----
 *   "capture": { "path": ..., "sha256": ... | null } | null
 * (its layer is the state's "capture-layer").  A capture that is missing or refused on reading
 * is a warning: the content then draws unit queries and keys. */

static void
write_capture (JsonBuilder      *b,
               RpeExplorerState *state)
{
  RpeExplorerCapture *c = rpe_explorer_state_get_capture (state);

  json_builder_set_member_name (b, "capture");
  if (c == NULL)
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_object (b);
  add_string (b, "path", c->path);
  add_string (b, "sha256", c->sha256);
  json_builder_end_object (b);
}

static void
read_capture (RpeSession *s,
              JsonNode   *node)
{
  const char *path;
  g_autofree char *found = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeExplorerCapture) capture = NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node) || !JSON_NODE_HOLDS_OBJECT (node)
      || (path = opt_string (json_node_get_object (node), "path")) == NULL)
    return;
  if (rpe_demos_is_spec (path) && !g_file_test (path, G_FILE_TEST_EXISTS))
    found = g_strdup (path);
  else if ((found = locate (path, s->file, "capture", s->warnings)) == NULL)
    {
      g_ptr_array_add (s->warnings, g_strdup_printf ("The session's capture “%s” is missing (it is not beside the "
                                                     "session either); unit queries and keys are shown.", path));
      return;
    }
  else
    check_hash (found, opt_string (json_node_get_object (node), "sha256"), "capture", s->warnings);
  capture = rpe_explorer_capture_open (found, &error);
  if (capture == NULL)
    g_ptr_array_add (s->warnings, g_strdup_printf ("The session's capture “%s” cannot be used: %s", found,
                                                   error->message));
  else
    rpe_explorer_state_restore_capture (s->state, capture);
}

static gboolean
read_outputs (RpeSession *s,
              JsonNode   *node,
              GError    **error)
{
  RpeSessionOutputs *x = &s->outputs;
  JsonObject *o;
  JsonNode *n;
  const char *name;
  double v;
  guint i;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (error, "“outputs” must be an object");
  o = json_node_get_object (node);
  name = opt_string (o, "values");
  for (i = 0; outputs_values_names[i] != NULL && g_strcmp0 (name, outputs_values_names[i]) != 0; i++)
    ;
  if (outputs_values_names[i] == NULL)
    return bad (error, "the outputs' values must be impulse, sweep, noise or array");
  x->values = i;
  if ((n = member (o, "channels", JSON_NODE_VALUE)) == NULL || !get_number (n, &v) || v != floor (v) || v < 1
      || v > RPE_SESSION_OUTPUTS_MAX_CHANNELS)
    return bad (error, "the outputs' channels must be 1 .. %d", RPE_SESSION_OUTPUTS_MAX_CHANNELS);
  x->channels = (guint) v;
  name = opt_string (o, "compare");
  for (i = 0; outputs_compare_names[i] != NULL && g_strcmp0 (name, outputs_compare_names[i]) != 0; i++)
    ;
  if (outputs_compare_names[i] == NULL)
    return bad (error, "the outputs' compare must be softmax or kernel");
  x->compare = i;
  if ((n = member (o, "channel", JSON_NODE_VALUE)) == NULL || !get_number (n, &v) || v != floor (v) || v < 0
      || v >= RPE_SESSION_OUTPUTS_MAX_CHANNELS * 64.0)
    return bad (error, "the outputs' plot channel is out of range");
  x->channel = (guint) v;
  if ((n = member (o, "several-draws", JSON_NODE_VALUE)) == NULL || json_node_get_value_type (n) != G_TYPE_BOOLEAN)
    return bad (error, "the outputs' several-draws must be true or false");
  x->several_draws = json_node_get_boolean (n);
  /* absent in sessions of earlier versions */
  if ((n = json_object_get_member (o, "captured-values")) != NULL)
    {
      if (JSON_NODE_TYPE (n) != JSON_NODE_VALUE || json_node_get_value_type (n) != G_TYPE_BOOLEAN)
        return bad (error, "the outputs' captured-values must be true or false");
      x->captured = json_node_get_boolean (n);
    }
  name = opt_string (o, "impulse-positions");
  if (name != NULL && *name != '\0')
    {
      g_auto (GStrv) parts = g_strsplit (name, ",", -1);

      if (g_strv_length (parts) > RPE_SESSION_OUTPUTS_MAX_CHANNELS)
        return bad (error, "the outputs' impulse positions are too many");
      for (i = 0; parts[i] != NULL; i++)
        if (!g_ascii_string_to_unsigned (parts[i], 10, 0, RPE_EXPLORER_MAX_LENGTH - 1, NULL, NULL))
          return bad (error, "the outputs' impulse positions must be positions 0 .. %u, comma-separated",
                      (guint) RPE_EXPLORER_MAX_LENGTH - 1);
      x->positions = g_strdup (name);
    }
  n = json_object_get_member (o, "values-file");
  if (n != NULL && JSON_NODE_HOLDS_OBJECT (n))
    {
      JsonObject *f = json_node_get_object (n);
      const char *path = opt_string (f, "path");
      g_autofree char *found = NULL;

      if (path == NULL)
        return bad (error, "the outputs' values file has no path");
      found = locate (path, s->file, "values file", s->warnings);
      if (found == NULL)
        return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                              "The session's values file “%s” is missing (it is not beside the session either)", path);
      check_hash (found, opt_string (f, "sha256"), "values file", s->warnings);
      x->values_path = g_steal_pointer (&found);
      x->values_sha256 = g_strdup (opt_string (f, "sha256"));
    }
  else if (n != NULL && !JSON_NODE_HOLDS_NULL (n))
    return bad (error, "the outputs' values file must be an object or null");
  if (x->values == RPE_VALUES_ARRAY && x->values_path == NULL)
    return bad (error, "the outputs' values come from a .npy file the session does not name");
  x->have = TRUE;
  return TRUE;
}

/* The session's checkpoint fingerprinted (s->model_print) and its capture checked against it: a
 * capture of another model refuses the session (naming both); one that records no fingerprint is
 * a warning (it cannot be checked). */
static gboolean
check_capture_model (RpeSession *s, GError **error)
{
  RpeExplorerCapture *c = rpe_explorer_state_get_capture (s->state);
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GError) local = NULL;

  if (s->checkpoint.path == NULL)
    return TRUE;
  set = rpe_demos_read_or_file (s->checkpoint.path, &local);
  if (set == NULL)
    {
      if (c != NULL)
        g_ptr_array_add (s->warnings, g_strdup_printf ("The session's capture “%s” could not be checked against its "
                                                       "checkpoint “%s”: %s",
                                                       c->path, s->checkpoint.path, local->message));
      return TRUE;
    }
  s->model_print = rpe_model_print_new (set, s->checkpoint.path);
  if (c == NULL)
    return TRUE;
  if (rpe_capture_n_model_tensors (c->capture) == 0)
    {
      g_ptr_array_add (s->warnings, g_strdup_printf ("The session's capture “%s” records no fingerprint of the model "
                                                     "it was made on: that it comes from “%s” cannot be checked.",
                                                     c->path, s->checkpoint.path));
      return TRUE;
    }
  if (!rpe_capture_check_model (c->capture, s->model_print, NULL, &local))
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "The session pairs the capture “%s” with the checkpoint “%s” of another model: %s", c->path,
                          s->checkpoint.path, local->message);
  return TRUE;
}

static gboolean
read_checkpoint (RpeSession  *s,
                 JsonNode    *node,
                 GError     **error)
{
  JsonObject *o;
  JsonNode *map;
  const char *path;
  gint64 layer = -1;
  g_autofree char *found = NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (error, "“checkpoint” must be an object");
  o = json_node_get_object (node);
  path = opt_string (o, "path");
  if (path == NULL || path[0] == '\0')
    return bad (error, "the checkpoint has no path");
  if (json_object_has_member (o, "layer") && !get_int (o, "layer", -1, G_MAXINT, &layer, "the checkpoint", error))
    return FALSE;
  checkpoint_clear (&s->checkpoint);
  s->checkpoint.layer = (int) layer;
  s->checkpoint.prefix = g_strdup (opt_string (o, "prefix"));
  s->checkpoint.sha256 = g_strdup (opt_string (o, "sha256"));
  map = member (o, "map", JSON_NODE_ARRAY);
  if (map != NULL && json_array_get_length (json_node_get_array (map)) > 0)
    {
      JsonArray *a = json_node_get_array (map);
      guint len = json_array_get_length (a);

      if (len > 64)
        return bad (error, "the checkpoint's map has %u entries (at most 64)", len);
      s->checkpoint.map = g_new0 (char *, len + 1);
      for (guint i = 0; i < len; i++)
        {
          JsonNode *e = json_array_get_element (a, i);

          if (JSON_NODE_TYPE (e) != JSON_NODE_VALUE || json_node_get_value_type (e) != G_TYPE_STRING)
            return bad (error, "the checkpoint's map must hold ROLE=TENSOR strings");
          s->checkpoint.map[i] = g_strdup (json_node_get_string (e));
        }
    }
  if (is_demo (path))
    {
      s->checkpoint.path = g_strdup (path);
      return TRUE;
    }
  found = locate (path, s->file, "checkpoint", s->warnings);
  if (found == NULL)
    return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                          "The session's checkpoint “%s” is missing (it is not beside the session either)", path);
  check_hash (found, s->checkpoint.sha256, "checkpoint", s->warnings);
  s->checkpoint.path = g_steal_pointer (&found);
  return TRUE;
}

/* The length of the array `name` of o (0 when absent or null); FALSE when it is no array or too long. */
static gboolean
array_length (JsonObject  *o,
              const char  *name,
              gsize        max,
              gsize       *length,
              GError     **error)
{
  JsonNode *n = json_object_get_member (o, name);

  *length = 0;
  if (n == NULL || JSON_NODE_HOLDS_NULL (n))
    return TRUE;
  if (!JSON_NODE_HOLDS_ARRAY (n))
    return bad (error, "“%s” of the trained LRPE parameters must be an array", name);
  *length = json_array_get_length (json_node_get_array (n));
  if (*length == 0 || *length > max)
    return bad (error, "“%s” of the trained LRPE parameters holds %zu values (1 .. %zu)", name,
                (size_t) *length, (size_t) max);
  return TRUE;
}

/* "lrpe-trained-parameters": v, theta and the permutation pi, held by the state with their label. */
static gboolean
read_lrpe_trained (RpeSession  *s,
                   JsonNode    *node,
                   GError     **error)
{
  JsonObject *o;
  g_autoptr (RpeLrpeTrained) t = NULL;
  const char *label;
  float *v = NULL;
  gsize n_v, n_theta, n_pi;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (error, "“lrpe-trained-parameters” must be an object");
  o = json_node_get_object (node);
  if (!array_length (o, "v", 4096, &n_v, error) || !array_length (o, "theta", 4096, &n_theta, error)
      || !array_length (o, "pi", 4096, &n_pi, error))
    return FALSE;
  if (n_v == 0 && n_theta == 0 && n_pi == 0)
    return bad (error, "the trained LRPE parameters hold none of v, theta and pi");
  t = g_new0 (RpeLrpeTrained, 1);
  if (n_v > 0)
    {
      if (!get_floats (o, "v", n_v, -1e6, 1e6, FALSE, &v, "the trained LRPE parameters", error))
        return FALSE;
      t->v = g_memdup2 (v, n_v * sizeof (float));
      t->v_dim = n_v;
      rpe_free (v);
      v = NULL;
    }
  t->v_learned = json_object_has_member (o, "v-learned") && json_object_get_boolean_member (o, "v-learned");
  if (n_theta > 0)
    {
      if (!get_floats (o, "theta", n_theta, -1e6, 1e6, FALSE, &v, "the trained LRPE parameters", error))
        return FALSE;
      t->theta = g_memdup2 (v, n_theta * sizeof (float));
      t->n_theta = n_theta;
      rpe_free (v);
    }
  if (n_pi > 0)
    {
      JsonArray *a = json_object_get_array_member (o, "pi");
      g_autofree gboolean *seen = g_new0 (gboolean, n_pi);

      t->pi = g_new (uint32_t, n_pi);
      t->n_pi = n_pi;
      for (gsize i = 0; i < n_pi; i++)
        {
          double x;

          if (!get_number (json_array_get_element (a, (guint) i), &x) || x != floor (x) || x < 0
              || x >= (double) n_pi || seen[(gsize) x])
            return bad (error, "“pi” of the trained LRPE parameters is not a permutation of 0 .. %zu",
                        (size_t) n_pi - 1);
          seen[(gsize) x] = TRUE;
          t->pi[i] = (uint32_t) x;
        }
    }
  label = opt_string (o, "source");
  rpe_explorer_state_set_lrpe_trained (s->state, t, label != NULL ? label : "trained parameters (session)");
  return TRUE;
}

/* The most floats "trained-modules" may hold in all (64 MiB of float32): checked from the
 * declared shapes before anything is allocated. */
#define TRAINED_MAX_FLOATS ((gint64) 1 << 24)

/* "trained-modules" (write_trained): every shape checked against the limits and the declared
 * (H, D) before the values are read; the switches are among the state's properties. */
static gboolean
read_trained (RpeSession *s, JsonNode *node, GError **error)
{
  JsonObject *o;
  JsonNode   *fn, *an;
  g_autoptr (RpeExplorerTrained) t = NULL;
  gint64  heads, dim, total = 0;
  GError *local = NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (error, "“trained-modules” must be an object");
  o = json_node_get_object (node);
  if (!get_int (o, "heads", 1, 4096, &heads, "the trained modules", error)
      || !get_int (o, "dim", 1, 65536, &dim, "the trained modules", error))
    return FALSE;
  fn = json_object_get_member (o, "fastrpb");
  an = json_object_get_member (o, "ape");
  if (fn != NULL && !JSON_NODE_HOLDS_NULL (fn) && !JSON_NODE_HOLDS_ARRAY (fn))
    return bad (error, "“fastrpb” of the trained modules must be an array");
  if (an != NULL && !JSON_NODE_HOLDS_NULL (an) && !JSON_NODE_HOLDS_OBJECT (an))
    return bad (error, "“ape” of the trained modules must be an object or null");
  if (fn != NULL && JSON_NODE_HOLDS_ARRAY (fn)
      && json_array_get_length (json_node_get_array (fn)) > RPE_EXPLORER_TRAINED_MAX_LAYERS)
    return bad (error, "the trained modules hold %u FastRPB modules (at most %d)",
                json_array_get_length (json_node_get_array (fn)), RPE_EXPLORER_TRAINED_MAX_LAYERS);
  t = rpe_explorer_trained_new ((gsize) heads, (gsize) dim, opt_string (o, "source"), &local);
  if (t == NULL)
    return bad (error, "%s", local->message), g_clear_error (&local), FALSE;
  for (guint i = 0; fn != NULL && JSON_NODE_HOLDS_ARRAY (fn) && i < json_array_get_length (json_node_get_array (fn));
       i++)
    {
      JsonNode   *e = json_array_get_element (json_node_get_array (fn), i);
      JsonObject *m;
      JsonNode   *ln;
      gint64      taps, layer = RPE_EXPLORER_TRAINED_NO_LAYER;
      float      *w = NULL;
      gboolean    ok;

      if (!JSON_NODE_HOLDS_OBJECT (e))
        return bad (error, "FastRPB module %u of the trained modules must be an object", i);
      m = json_node_get_object (e);
      if (!get_int (m, "taps", 1, RPE_EXPLORER_TRAINED_MAX_TAPS, &taps, "a trained FastRPB module", error))
        return FALSE;
      ln = json_object_get_member (m, "layer");
      if (ln != NULL && !JSON_NODE_HOLDS_NULL (ln)
          && !get_int (m, "layer", 0, 999999, &layer, "a trained FastRPB module", error))
        return FALSE;
      /* the budget, from the declared shape, before the values are read */
      total += heads * (2 * taps - 1);
      if (total > TRAINED_MAX_FLOATS)
        return bad (error, "the trained modules hold more than %" G_GINT64_FORMAT " values", TRAINED_MAX_FLOATS);
      if (!get_floats (m, "w", (gsize) (heads * (2 * taps - 1)), -1e6, 1e6, FALSE, &w, "a trained FastRPB module",
                       error))
        return FALSE;
      ok = rpe_explorer_trained_add_fastrpb (t, (guint) layer, opt_string (m, "prefix"), (gsize) taps, w, &local);
      rpe_free (w);
      if (!ok)
        return bad (error, "%s", local->message), g_clear_error (&local), FALSE;
    }
  if (an != NULL && JSON_NODE_HOLDS_OBJECT (an))
    {
      JsonObject *a = json_node_get_object (an);
      gint64      positions;
      float      *w = NULL;
      gboolean    ok;

      if (!get_int (a, "positions", 1, 65536, &positions, "the learned absolute embedding", error))
        return FALSE;
      total += positions * heads * dim;
      if (total > TRAINED_MAX_FLOATS)
        return bad (error, "the trained modules hold more than %" G_GINT64_FORMAT " values", TRAINED_MAX_FLOATS);
      if (!get_floats (a, "w", (gsize) (positions * heads * dim), -1e6, 1e6, FALSE, &w,
                       "the learned absolute embedding", error))
        return FALSE;
      ok = rpe_explorer_trained_set_ape (t, (gsize) positions, w, &local);
      rpe_free (w);
      if (!ok)
        return bad (error, "%s", local->message), g_clear_error (&local), FALSE;
    }
  rpe_explorer_state_restore_trained (s->state, t);
  return TRUE;
}

static gboolean
read_content (RpeSession  *s,
              JsonNode    *node,
              GError     **error)
{
  JsonObject *o;
  JsonNode *shape_node;
  JsonArray *shape_array;
  gsize shape[3] = { 0, 0, 0 }, ndim, count = 1;
  const char *path;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return bad (error, "“content” must be an object");
  o = json_node_get_object (node);
  shape_node = member (o, "shape", JSON_NODE_ARRAY);
  if (shape_node == NULL)
    return bad (error, "the content has no shape");
  shape_array = json_node_get_array (shape_node);
  ndim = json_array_get_length (shape_array);
  if (ndim != 2 && ndim != 3)
    return bad (error, "the content's shape must be (N, D) or (N, H, D)");
  for (gsize i = 0; i < ndim; i++)
    {
      double v;

      if (!get_number (json_array_get_element (shape_array, (guint) i), &v) || v != floor (v) || v < 1
          || v > RPE_EXPLORER_MAX_LENGTH * 16.0 || !rpe_size_mul (count, (gsize) v, &count))
        return bad (error, "the content's shape is out of range");
      shape[i] = (gsize) v;
    }
  if (count > MAX_VALUES)
    return bad (error, "the content is too large");
  path = opt_string (o, "path");
  if (path != NULL)
    {
      g_autofree char *found = locate (path, s->file, "content file", s->warnings);
      g_autoptr (GError) read_error = NULL;
      RpeTensor *t;
      gboolean same;

      if (found == NULL)
        return rpe_set_error (error, RPE_ERROR_NOT_FOUND,
                              "The session's content file “%s” is missing (it is not beside the session either)", path);
      check_hash (found, opt_string (o, "sha256"), "content file", s->warnings);
      t = rpe_npy_read (found, &read_error);
      if (t == NULL)
        return rpe_set_error (error, RPE_ERROR_FORMAT, "The session's content file “%s”: %s", found,
                              read_error->message);
      same = t->ndim == ndim && memcmp (t->shape, shape, ndim * sizeof (gsize)) == 0;
      if (same && !rpe_explorer_state_set_npy_content (s->state, t->data, ndim, shape, error))
        {
          rpe_tensor_free (t);
          return FALSE;
        }
      rpe_tensor_free (t);
      if (!same)
        return bad (error, "the content file “%s” no longer has the saved shape", found);
      s->content_path = g_steal_pointer (&found);
      s->content_sha256 = g_strdup (opt_string (o, "sha256"));
      return TRUE;
    }
  {
    float *data = NULL;

    if (!get_floats (o, "data", count, -G_MAXFLOAT, G_MAXFLOAT, FALSE, &data, "the content", error))
      return FALSE;
    if (!rpe_explorer_state_set_npy_content (s->state, data, ndim, shape, error))
      {
        rpe_free (data);
        return FALSE;
      }
    rpe_free (data);
  }
  return TRUE;
}

/* The export options a session may carry: a known option, its value if it takes one. */
gboolean
rpe_session_export_option_ok (const char *name,
                              gboolean   *takes_value)
{
  static const char *const with_value[] = { "--colormap", "--preset", "--reduce", NULL };
  static const char *const flags[] = { "--attention-transform", "--per-cell-scale", NULL };

  *takes_value = g_strv_contains (with_value, name);
  return *takes_value || g_strv_contains (flags, name);
}

static gboolean
read_export_options (RpeSession  *s,
                     JsonNode    *node,
                     GError     **error)
{
  JsonArray *a;
  guint len;
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);

  if (node == NULL)
    return TRUE;
  a = json_node_get_array (node);
  len = json_array_get_length (a);
  if (len > 16)
    return bad (error, "the export has %u options (at most 16)", len);
  for (guint i = 0; i < len; i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      const char *name;
      gboolean takes_value;

      if (JSON_NODE_TYPE (e) != JSON_NODE_VALUE || json_node_get_value_type (e) != G_TYPE_STRING)
        return bad (error, "the export options must be strings");
      name = json_node_get_string (e);
      if (!rpe_session_export_option_ok (name, &takes_value))
        {
          g_autofree char *shown = rpe_escape_message (name);

          return bad (error, "the export option “%s” is not one a session holds", shown);
        }
      g_ptr_array_add (out, g_strdup (name));
      if (takes_value)
        {
          JsonNode *v = i + 1 < len ? json_array_get_element (a, i + 1) : NULL;
          const char *value;

          if (v == NULL || JSON_NODE_TYPE (v) != JSON_NODE_VALUE || json_node_get_value_type (v) != G_TYPE_STRING)
            return bad (error, "the export option “%s” has no value", name);
          value = json_node_get_string (v);
          if (value[0] == '-' || value[0] == '\0' || strlen (value) > 64)
            return bad (error, "the export option “%s” has a bad value", name);
          g_ptr_array_add (out, g_strdup (value));
          i++;
        }
    }
  if (out->len > 0)
    {
      g_ptr_array_add (out, NULL);
      s->export_options = (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
    }
  return TRUE;
}

RpeSession *
rpe_session_load_data (const char  *data,
                       gsize        length,
                       const char  *file,
                       GError     **error)
{
  g_autoptr (JsonParser) parser = NULL;
  g_autoptr (GError) parse_error = NULL;
  g_autoptr (RpeSession) s = NULL;
  g_autofree char *clean = NULL;
  ScanStats stats;
  JsonNode *root, *n;
  JsonObject *o, *state_obj;
  const char *format, *view;
  gint64 version, cell = -1;

  g_return_val_if_fail (data != NULL || length == 0, NULL);

  if (length > RPE_SESSION_MAX_BYTES)
    {
      bad (error, "the file is larger than %u MiB", RPE_SESSION_MAX_BYTES >> 20);
      return NULL;
    }
  if (!prescan (data, length, &clean, &stats, error) || !prescan_budget (length, &stats, error))
    return NULL;
  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, clean != NULL ? clean : data, (gssize) length, &parse_error))
    {
      g_autofree char *msg = rpe_escape_message (parse_error->message);

      g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT, "Not a session file: it is not JSON (%s)", msg);
      return NULL;
    }
  root = json_parser_get_root (parser);
  if (root == NULL)
    {
      g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT, "Not a session file: it is empty, not JSON");
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT, "Not a session file: the JSON is not an object");
      return NULL;
    }
  o = json_node_get_object (root);
  format = opt_string (o, "format");
  if (g_strcmp0 (format, RPE_SESSION_FORMAT) != 0)
    {
      g_autofree char *shown = format != NULL ? rpe_escape_message (format) : NULL;

      g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT,
                   "Not a session file: its format is “%s”, not “" RPE_SESSION_FORMAT "”",
                   shown != NULL ? shown : "(none)");
      return NULL;
    }
  n = json_object_get_member (o, "version");
  {
    double v;

    if (!get_number (n, &v) || v != floor (v) || v < 1)
      {
        g_set_error (error, RPE_ERROR, RPE_ERROR_FORMAT, "Not a valid session: no format version");
        return NULL;
      }
    if (v > RPE_SESSION_VERSION)
      {
        g_set_error (error, RPE_ERROR, RPE_ERROR_UNSUPPORTED,
                     "The session has format version %.0f, newer than this RPE Studio reads (%d): update RPE Studio",
                     v, RPE_SESSION_VERSION);
        return NULL;
      }
    version = (gint64) v;
  }
  (void) version;

  s = session_new_empty ();
  s->state = rpe_explorer_state_new ();
  s->file = file != NULL ? g_canonicalize_filename (file, NULL) : NULL;

  view = opt_string (o, "view");
  if (view != NULL)
    {
      if (!g_strv_contains (window_views, view))
        {
          g_autofree char *shown = rpe_escape_message (view);

          bad (error, "unknown view “%s”", shown);
          return NULL;
        }
      g_free (s->view);
      s->view = g_strdup (view);
    }
  if (json_object_has_member (o, "template-cell")
      && !get_int (o, "template-cell", -1, MAX_FEATURES - 1, &cell, "the session", error))
    return NULL;
  s->template_cell = (int) cell;

  /* the modules first (their shapes bound the head and feature) */
  n = json_object_get_member (o, "modules");
  if (n != NULL && !JSON_NODE_HOLDS_NULL (n) && !JSON_NODE_HOLDS_OBJECT (n))
    {
      bad (error, "“modules” must be an object");
      return NULL;
    }
  if (n != NULL && JSON_NODE_HOLDS_OBJECT (n)
      && (!read_module (json_node_get_object (n), RPE_SPE_SINE, s->state, error)
          || !read_module (json_node_get_object (n), RPE_SPE_CONV, s->state, error)))
    return NULL;

  {
    float *w = NULL;
    gsize count;

    rpe_explorer_state_get_fastrpb_weights (s->state, &count);
    if (json_object_has_member (o, "fastrpb-weights"))
      {
        if (!get_floats (o, "fastrpb-weights", count, -1e6, 1e6, FALSE, &w, "the session", error))
          return NULL;
        rpe_explorer_state_set_fastrpb_weights (s->state, w, count);
        rpe_free (w);
      }
  }

  if (!read_lrpe_trained (s, json_object_get_member (o, "lrpe-trained-parameters"), error))
    return NULL;
  if (!read_trained (s, json_object_get_member (o, "trained-modules"), error))
    return NULL;
  if (!read_content (s, json_object_get_member (o, "content"), error))
    return NULL;
  read_capture (s, json_object_get_member (o, "capture"));
  if (!read_checkpoint (s, json_object_get_member (o, "checkpoint"), error))
    return NULL;
  if (!check_capture_model (s, error))
    return NULL;
  if (!read_outputs (s, json_object_get_member (o, "outputs"), error))
    return NULL;

  n = json_object_get_member (o, "state");
  if (n == NULL || !JSON_NODE_HOLDS_OBJECT (n))
    {
      bad (error, "it has no “state” object");
      return NULL;
    }
  state_obj = json_node_get_object (n);
  {
    g_autoptr (GList) names = json_object_get_members (state_obj);

    for (GList *l = names; l != NULL; l = l->next)
      {
        GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (s->state), l->data);

        if (pspec == NULL || (pspec->flags & G_PARAM_READWRITE) != G_PARAM_READWRITE
            || (pspec->flags & G_PARAM_CONSTRUCT_ONLY) != 0)
          {
            g_autofree char *shown = rpe_escape_message (l->data);

            g_ptr_array_add (s->warnings, g_strdup_printf ("The setting “%s” is unknown to this RPE Studio and was "
                                                           "ignored.", shown));
            continue;
          }
        if (!read_property (s->state, pspec, json_object_get_member (state_obj, l->data), error))
          return NULL;
      }
  }
  /* head and feature within the modules' shapes */
  {
    const RpeSpeParams *p = rpe_explorer_state_get_params (s->state, rpe_explorer_state_get_spe_kind (s->state));

    if (p != NULL && rpe_explorer_state_get_head (s->state) >= p->n_heads)
      {
        bad (error, "“head” is out of range: %zu (the module has %zu heads)",
             (size_t) rpe_explorer_state_get_head (s->state), (size_t) p->n_heads);
        return NULL;
      }
    if (p != NULL && rpe_explorer_state_get_feature (s->state) >= p->n_features)
      {
        bad (error, "“feature” is out of range: %zu (the module has %zu features)",
             (size_t) rpe_explorer_state_get_feature (s->state), (size_t) p->n_features);
        return NULL;
      }
    if (p != NULL && s->template_cell >= (int) p->n_features)
      {
        bad (error, "“template-cell” is out of range: %d (the module has %zu features)", s->template_cell,
             (size_t) p->n_features);
        return NULL;
      }
  }

  n = json_object_get_member (o, "viewport");
  if (n != NULL && JSON_NODE_HOLDS_ARRAY (n))
    {
      JsonArray *a = json_node_get_array (n);

      if (json_array_get_length (a) != 4)
        {
          bad (error, "“viewport” must hold 4 numbers");
          return NULL;
        }
      for (guint i = 0; i < 4; i++)
        if (!get_number (json_array_get_element (a, i), &s->viewport[i]) || fabs (s->viewport[i]) > 1e9)
          {
            bad (error, "“viewport” must hold 4 finite numbers");
            return NULL;
          }
      s->have_viewport = TRUE;
    }

  n = member (o, "export", JSON_NODE_OBJECT);
  if (n != NULL)
    {
      JsonObject *e = json_node_get_object (n);
      double *fields[3] = { &s->export_width, &s->export_height, &s->export_dpi };
      const char *names[3] = { "width", "height", "dpi" };

      for (int i = 0; i < 3; i++)
        {
          JsonNode *f = json_object_get_member (e, names[i]);

          if (f == NULL)
            continue;
          if (!get_number (f, fields[i]) || *fields[i] < 0 || *fields[i] > 100000)
            {
              bad (error, "the export %s is out of range", names[i]);
              return NULL;
            }
        }
      if (opt_string (e, "title") != NULL && g_utf8_strlen (opt_string (e, "title"), -1) > RPE_SESSION_MAX_TITLE)
        {
          bad (error, "the export title is longer than %u characters", RPE_SESSION_MAX_TITLE);
          return NULL;
        }
      s->export_title = g_strdup (opt_string (e, "title"));
      if (json_object_has_member (e, "length"))
        {
          gint64 len;

          if (!get_int (e, "length", 0, RPE_EXPLORER_MAX_LENGTH, &len, "the export", error))
            return NULL;
          if (len == 1)
            {
              bad (error, "the export length must be 0 or 2 .. %d", RPE_EXPLORER_MAX_LENGTH);
              return NULL;
            }
          s->export_length = (guint) len;
        }
      if (!read_export_options (s, member (e, "options", JSON_NODE_ARRAY), error))
        return NULL;
    }
  return g_steal_pointer (&s);
}

RpeSession *
rpe_session_load (const char  *path,
                  GError     **error)
{
  g_autoptr (GFile) file = NULL;
  g_autoptr (GFileInfo) info = NULL;
  g_autofree char *data = NULL;
  gsize length = 0;

  g_return_val_if_fail (path != NULL, NULL);
  file = g_file_new_for_path (path);
  info = g_file_query_info (file, G_FILE_ATTRIBUTE_STANDARD_SIZE "," G_FILE_ATTRIBUTE_STANDARD_TYPE,
                            G_FILE_QUERY_INFO_NONE, NULL, error);
  if (info == NULL)
    return NULL;
  if (g_file_info_get_file_type (info) != G_FILE_TYPE_REGULAR)
    {
      rpe_set_error (error, RPE_ERROR_IO, "“%s” is not a regular file", path);
      return NULL;
    }
  if (g_file_info_get_size (info) > (goffset) RPE_SESSION_MAX_BYTES)
    {
      bad (error, "the file is larger than %u MiB", RPE_SESSION_MAX_BYTES >> 20);
      return NULL;
    }
  if (!g_file_get_contents (path, &data, &length, error))
    return NULL;
  return rpe_session_load_data (data, length, path, error);
}

static void
load_thread (GTask        *task,
             gpointer      source,
             gpointer      task_data,
             GCancellable *cancellable)
{
  GError *error = NULL;
  RpeSession *s = rpe_session_load (task_data, &error);

  if (s == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, s, (GDestroyNotify) rpe_session_free);
}

void
rpe_session_load_async (const char          *path,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  g_return_if_fail (path != NULL);
  g_task_set_source_tag (task, rpe_session_load_async);
  g_task_set_return_on_cancel (task, FALSE);
  g_task_set_task_data (task, g_strdup (path), g_free);
  g_task_run_in_thread (task, load_thread);
}

RpeSession *
rpe_session_load_finish (GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  RpeSession *session;
  char       *path;
} SaveJob;

static void
save_job_free (gpointer data)
{
  SaveJob *job = data;

  rpe_session_free (job->session);
  g_free (job->path);
  g_free (job);
}

static void
save_thread (GTask        *task,
             gpointer      source,
             gpointer      task_data,
             GCancellable *cancellable)
{
  SaveJob *job = task_data;
  GError *error = NULL;

  if (!rpe_session_save (job->session, job->path, &error))
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, g_strdup (job->session->file), g_free);
}

void
rpe_session_save_async (RpeSession          *session,
                        const char          *path,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  SaveJob *job = g_new0 (SaveJob, 1);

  job->session = session;
  job->path = g_strdup (path);
  g_task_set_source_tag (task, rpe_session_save_async);
  g_task_set_task_data (task, job, save_job_free);
  g_task_run_in_thread (task, save_thread);
}

char *
rpe_session_save_finish (GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

void
rpe_session_apply (RpeSession       *session,
                   RpeExplorerState *state)
{
  g_return_if_fail (session != NULL);
  g_return_if_fail (RPE_IS_EXPLORER_STATE (state));
  rpe_explorer_state_copy_into (session->state, state);
}

/* ------------------------------------------------------ export options */

const char *
rpe_session_export_view (RpeSession  *session,
                         GError     **error)
{
  RpeExplorerState *st = session->state;

  if (g_strcmp0 (session->view, "templates") == 0)
    return session->template_cell >= 0 ? "template" : "templates";
  if (g_strcmp0 (session->view, "attention") == 0)
    return "attention";   /* every method, loaded content and zoom: rpe export attention draws them */
  if (g_strcmp0 (session->view, "curves") == 0)
    return "curves";      /* the Curves page's four plots (rpe export curves without --panel) */
  if (g_strcmp0 (session->view, "teaching") == 0)
    {
      guint content = 0;

      g_object_get (st, "content", &content, NULL);
      if (content == RPE_CONTENT_NPY)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                         "SPE vs RPE of queries/keys loaded from a .npy file has no `rpe export` figure "
                         "(the Attention view has)");
          return NULL;
        }
      return "spe-vs-rpe";
    }
  if (g_strcmp0 (session->view, "outputs") == 0)
    {
      guint content = 0;

      g_object_get (st, "content", &content, NULL);
      if (content == RPE_CONTENT_NPY)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "the Outputs view of queries/keys loaded from a .npy file "
                         "has no `rpe export` figure (outputs take unit or random content)");
          return NULL;
        }
      return "outputs";   /* rpe export outputs, with the view's settings of session->outputs */
    }
  rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "the %s view has no `rpe export --session` figure yet "
                 "(Templates, Attention, Curves and SPE vs RPE have)", session->view);
  return NULL;
}

typedef struct
{
  const char *name;
  guint       value;
} Choice;

static const Choice methods[] = {
  { "spe", RPE_EXPLORER_METHOD_SPE }, { "exact", RPE_EXPLORER_METHOD_EXACT }, { "ape", RPE_EXPLORER_METHOD_APE },
  { "lrpe", RPE_EXPLORER_METHOD_LRPE }, { "fastrpb", RPE_EXPLORER_METHOD_FASTRPB },
  { "linear", RPE_EXPLORER_METHOD_LINEAR }, { NULL, 0 } };
static const Choice lrpe_ps[] = {
  { "identity", RPE_LRPE_P_IDENTITY }, { "householder", RPE_LRPE_P_HOUSEHOLDER },
  { "permutation", RPE_LRPE_P_PERMUTATION }, { "odd-even", RPE_LRPE_P_ODD_EVEN },
  { "fourier", RPE_LRPE_P_FOURIER }, { "dct", RPE_LRPE_P_DCT }, { NULL, 0 } };
static const Choice lrpe_lambdas[] = {
  { "rotation", RPE_LRPE_LAMBDA_ROTATION }, { "mixed", RPE_LRPE_LAMBDA_MIXED },
  { "complex", RPE_LRPE_LAMBDA_COMPLEX_EXP }, { "permutation", RPE_LRPE_LAMBDA_PERMUTATION }, { NULL, 0 } };
static const Choice lrpe_thetas[] = {
  { "a", RPE_LRPE_THETA_A }, { "b", RPE_LRPE_THETA_B }, { "c", RPE_LRPE_THETA_C }, { NULL, 0 } };
static const Choice feature_maps[] = {
  { "relu", RPE_FEATURE_RELU }, { "elu1", RPE_FEATURE_ELU1 }, { "exp", RPE_FEATURE_EXP },
  { "performer", RPE_FEATURE_PERFORMER }, { "dpfp", RPE_FEATURE_DPFP }, { NULL, 0 } };

static const Choice *
choices_of (const char *option)
{
  if (g_strcmp0 (option, "--attention-method") == 0)
    return methods;
  if (g_strcmp0 (option, "--lrpe-p") == 0)
    return lrpe_ps;
  if (g_strcmp0 (option, "--lrpe-lambda") == 0)
    return lrpe_lambdas;
  if (g_strcmp0 (option, "--lrpe-theta") == 0)
    return lrpe_thetas;
  if (g_strcmp0 (option, "--feature-map") == 0)
    return feature_maps;
  return NULL;
}

const char *
rpe_session_choice_name (const char *option,
                         guint       value)
{
  for (const Choice *c = choices_of (option); c != NULL && c->name != NULL; c++)
    if (c->value == value)
      return c->name;
  return NULL;
}

gboolean
rpe_session_choice_value (const char *option,
                          const char *name,
                          guint      *value)
{
  for (const Choice *c = choices_of (option); c != NULL && c->name != NULL && name != NULL; c++)
    if (g_str_equal (c->name, name))
      {
        *value = c->value;
        return TRUE;
      }
  return FALSE;
}

gboolean
rpe_session_viewport_cells (const double  viewport[4],
                            gsize         n,
                            gsize        *m0,
                            gsize        *m1,
                            gsize        *n0,
                            gsize        *n1)
{
  double v[4];

  for (guint i = 0; i < 4; i++)
    v[i] = CLAMP (viewport[i], 0.0, (double) n);
  /* the cells the view requests: floor of the start, ceil of the end */
  *m0 = (gsize) floor (v[0]);
  *m1 = (gsize) ceil (v[1]);
  *n0 = (gsize) floor (v[2]);
  *n1 = (gsize) ceil (v[3]);
  return *m0 < *m1 && *n0 < *n1;
}

static void
add_opt (GPtrArray  *argv,
         const char *name,
         const char *value)
{
  g_ptr_array_add (argv, g_strdup (name));
  if (value != NULL)
    g_ptr_array_add (argv, g_strdup (value));
}

static void
add_int_opt (GPtrArray  *argv,
             const char *name,
             guint64     value)
{
  g_autofree char *text = g_strdup_printf ("%" G_GUINT64_FORMAT, value);

  add_opt (argv, name, text);
}

GStrv
rpe_session_export_argv (RpeSession  *session,
                         gboolean     with_source,
                         GError     **error)
{
  RpeExplorerState *st;
  const char *view;
  g_autoptr (GPtrArray) argv = NULL;
  const RpeSpeParams *p;
  guint length, r, seed, head, feature, train, template_kind, content;
  gboolean causal, gated;
  g_autofree char *colormap = NULL;
  const RpeColormap *cmap;
  RpeSpeMethod kind;

  g_return_val_if_fail (session != NULL, NULL);
  st = session->state;
  view = rpe_session_export_view (session, error);
  if (view == NULL)
    return NULL;
  kind = rpe_explorer_state_get_spe_kind (st);
  p = rpe_explorer_state_get_params (st, kind);
  if (p == NULL)
    {
      rpe_set_error (error, RPE_ERROR_NOT_FOUND, "the session has no %s module", kind == RPE_SPE_SINE ? "sine" : "conv");
      return NULL;
    }
  if (with_source && session->checkpoint.path == NULL)
    {
      rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "the parameters come from no checkpoint file");
      return NULL;
    }
  if (with_source && (g_str_equal (view, "attention") || g_str_equal (view, "curves")))
    {
      /* what a session holds and no option says */
      guint loaded = 0;

      g_object_get (st, "content", &loaded, NULL);
      if (loaded == RPE_CONTENT_NPY)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "the queries/keys are loaded from a .npy file");
          return NULL;
        }
      if (loaded == RPE_CONTENT_CAPTURE)
        {
          rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "the queries/keys are a capture's (rpe export takes it "
                         "as --content CAPTURE --layer l)");
          return NULL;
        }
      if ((g_str_equal (view, "curves") || rpe_explorer_state_get_method (st) == RPE_EXPLORER_METHOD_LRPE)
          && rpe_explorer_state_get_lrpe_trained (st, NULL) != NULL)
        {
          gboolean trained = FALSE;

          g_object_get (st, "lrpe-trained", &trained, NULL);
          if (trained)
            {
              /* `rpe export` options draw the seeded LRPE: the session (--session) holds the trained values */
              rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "the LRPE parameters are trained ones, which only "
                             "a session holds");
              return NULL;
            }
        }
      if ((rpe_explorer_state_get_method (st) == RPE_EXPLORER_METHOD_FASTRPB && !fastrpb_trained_on (st))
          || g_str_equal (view, "curves"))
        {
          g_autoptr (RpeExplorerState) fresh = rpe_explorer_state_new ();
          gsize na = 0, nb = 0;
          const float *wa = rpe_explorer_state_get_fastrpb_weights (st, &na);
          const float *wb = rpe_explorer_state_get_fastrpb_weights (fresh, &nb);

          if (na != nb || memcmp (wa, wb, na * sizeof (float)) != 0)
            {
              rpe_set_error (error, RPE_ERROR_UNSUPPORTED, "the FastRPB weights were edited");
              return NULL;
            }
        }
    }
  g_object_get (st, "length", &length, "realizations", &r, "seed", &seed, "head", &head, "feature", &feature,
                "train-length", &train, "template-kind", &template_kind, "content", &content, "causal", &causal,
                "gated", &gated, "colormap", &colormap, NULL);
  gated = gated && p->gate != NULL;

  argv = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (argv, g_strdup (view));
  if (with_source)
    {
      add_opt (argv, "--checkpoint", session->checkpoint.path);
      if (session->checkpoint.prefix != NULL)
        add_opt (argv, "--prefix", session->checkpoint.prefix);
      if (session->checkpoint.layer >= 0)
        add_int_opt (argv, "--layer", (guint64) session->checkpoint.layer);
      for (char **m = session->checkpoint.map; m != NULL && *m != NULL; m++)
        add_opt (argv, "--map", *m);
    }
  add_opt (argv, "--method", kind == RPE_SPE_SINE ? "sine" : "conv");
  add_opt (argv, gated ? "--gate" : "--no-gate", NULL);
  add_int_opt (argv, "--head", MIN (head, p->n_heads - 1));
  if (g_str_equal (view, "template"))
    add_int_opt (argv, "--feature", (guint64) session->template_cell);
  /* the N the figure was computed at (a view's cap), else the state's */
  add_int_opt (argv, "--length", session->export_length > 0 ? session->export_length : length);
  if (train > 0)
    add_int_opt (argv, "--train-length", train);
  cmap = rpe_colormap_lookup (colormap);
  if (g_str_equal (view, "templates") || g_str_equal (view, "template"))
    {
      if (template_kind != RPE_TEMPLATE_ANALYTIC)
        {
          add_opt (argv, template_kind == RPE_TEMPLATE_EMPIRICAL ? "--empirical" : "--difference", NULL);
          add_int_opt (argv, "--realizations", r);
          add_int_opt (argv, "--seed", seed);
        }
      /* the window's templates take a diverging map only; the automatic choice otherwise */
      if (cmap != NULL && rpe_colormap_is_diverging (cmap))
        add_opt (argv, "--colormap", colormap);
    }
  else if (g_str_equal (view, "curves"))
    {
      guint lp, ll, lt;

      /* what the page's profiles and extrapolation use: R, the seed, causal, the LRPE choices */
      g_object_get (st, "lrpe-p", &lp, "lrpe-lambda", &ll, "lrpe-theta", &lt, NULL);
      add_int_opt (argv, "--realizations", r);
      add_int_opt (argv, "--seed", seed);
      add_opt (argv, causal ? "--causal" : "--no-causal", NULL);
      if (content == RPE_CONTENT_RANDOM)
        add_opt (argv, "--content", "random");
      add_opt (argv, "--lrpe-p", rpe_session_choice_name ("--lrpe-p", lp));
      add_opt (argv, "--lrpe-lambda", rpe_session_choice_name ("--lrpe-lambda", ll));
      add_opt (argv, "--lrpe-theta", rpe_session_choice_name ("--lrpe-theta", lt));
    }
  else if (g_str_equal (view, "outputs"))
    {
      const RpeSessionOutputs *x = &session->outputs;
      guint fm;

      g_object_get (st, "feature-map", &fm, NULL);
      add_int_opt (argv, "--realizations", r);
      add_int_opt (argv, "--seed", seed);
      add_opt (argv, causal ? "--causal" : "--no-causal", NULL);
      if (content == RPE_CONTENT_RANDOM)
        add_opt (argv, "--content", "random");
      add_opt (argv, "--feature-map", rpe_session_choice_name ("--feature-map", fm));
      /* the view's own settings (its defaults when the session has none) */
      if (x->have && x->values == RPE_VALUES_ARRAY)
        add_opt (argv, "--values", x->values_path);
      else
        {
          add_opt (argv, "--value-source", outputs_values_names[x->have ? x->values : RPE_VALUES_IMPULSE]);
          add_int_opt (argv, "--channels", x->have ? x->channels : 4);
          if (x->have && x->values == RPE_VALUES_IMPULSE && x->positions != NULL && *x->positions != '\0')
            add_opt (argv, "--impulse-positions", x->positions);
        }
      add_opt (argv, "--compare", outputs_compare_names[x->have ? x->compare : RPE_OUTPUTS_SOFTMAX]);
      add_int_opt (argv, "--draws", x->have && x->several_draws ? RPE_SESSION_OUTPUTS_DRAWS : 1);
      add_int_opt (argv, "--channel", x->have ? x->channel : 0);
      if (cmap != NULL && cmap != rpe_colormap_default ())
        add_opt (argv, "--colormap", colormap);
    }
  else
    {
      RpeExplorerMethod m = g_str_equal (view, "attention") ? rpe_explorer_state_get_method (st)
                                                            : RPE_EXPLORER_METHOD_SPE;
      gboolean exact = m == RPE_EXPLORER_METHOD_EXACT;

      if (m != RPE_EXPLORER_METHOD_SPE && m != RPE_EXPLORER_METHOD_EXACT)
        {
          guint lp, ll, lt, fm;

          add_opt (argv, "--attention-method", rpe_session_choice_name ("--attention-method", m));
          g_object_get (st, "lrpe-p", &lp, "lrpe-lambda", &ll, "lrpe-theta", &lt, "feature-map", &fm, NULL);
          if (m == RPE_EXPLORER_METHOD_LRPE)
            {
              add_opt (argv, "--lrpe-p", rpe_session_choice_name ("--lrpe-p", lp));
              add_opt (argv, "--lrpe-lambda", rpe_session_choice_name ("--lrpe-lambda", ll));
              add_opt (argv, "--lrpe-theta", rpe_session_choice_name ("--lrpe-theta", lt));
            }
          if (m == RPE_EXPLORER_METHOD_LRPE || m == RPE_EXPLORER_METHOD_LINEAR)
            add_opt (argv, "--feature-map", rpe_session_choice_name ("--feature-map", fm));
        }
      if (exact)
        add_opt (argv, "--exact", NULL);
      else
        add_int_opt (argv, "--realizations", r);
      add_opt (argv, causal ? "--causal" : "--no-causal", NULL);
      if (content == RPE_CONTENT_RANDOM)
        add_opt (argv, "--content", "random");
      if (!exact || content == RPE_CONTENT_RANDOM)
        add_int_opt (argv, "--seed", seed);
      if (g_str_equal (view, "attention") && session->have_viewport)
        {
          gsize m0, m1, n0, n1;
          guint nn = session->export_length > 0 ? session->export_length : length;

          if (rpe_session_viewport_cells (session->viewport, nn, &m0, &m1, &n0, &n1))
            {
              g_autofree char *rows = g_strdup_printf ("%zu:%zu", m0, m1);
              g_autofree char *cols = g_strdup_printf ("%zu:%zu", n0, n1);

              add_opt (argv, "--rows", rows);
              add_opt (argv, "--cols", cols);
            }
        }
      if (cmap != NULL && cmap != rpe_colormap_default ())
        add_opt (argv, "--colormap", colormap);
    }
  if (!g_str_equal (view, "curves"))   /* the Curves page has no heatmap */
  {
    /* the colour-scale control (the same figure as the window's) */
    guint scale = 0, range = 0;
    double gamma = 0, pct = 0;

    g_object_get (st, "color-scale", &scale, "color-range", &range, "color-gamma", &gamma, "color-percentile", &pct,
                  NULL);
    if (scale != RPE_HEATMAP_TRANSFORM_NONE)
      add_opt (argv, "--color-scale", rpe_plot_transform_name ((RpeHeatmapTransform) scale));
    if (scale == RPE_HEATMAP_TRANSFORM_POWER)
      add_opt (argv, "--gamma", g_ascii_dtostr ((char[G_ASCII_DTOSTR_BUF_SIZE]) { 0 }, G_ASCII_DTOSTR_BUF_SIZE, gamma));
    if (scale == RPE_HEATMAP_TRANSFORM_PERCENTILE)
      add_opt (argv, "--percentile", g_ascii_dtostr ((char[G_ASCII_DTOSTR_BUF_SIZE]) { 0 }, G_ASCII_DTOSTR_BUF_SIZE, pct));
    if (range == RPE_COLOR_RANGE_PER_PANEL && !g_str_equal (view, "attention") && !g_str_equal (view, "template")
        && !g_strv_contains ((const char *const *) (session->export_options != NULL ? session->export_options
                                                                                    : (char *[]) { NULL }),
                             "--per-cell-scale"))
      add_opt (argv, "--per-cell-scale", NULL);
  }
  if (session->export_width > 0)
    add_opt (argv, "--width", g_ascii_dtostr ((char[G_ASCII_DTOSTR_BUF_SIZE]) { 0 }, G_ASCII_DTOSTR_BUF_SIZE,
                                              session->export_width));
  if (session->export_height > 0)
    add_opt (argv, "--height", g_ascii_dtostr ((char[G_ASCII_DTOSTR_BUF_SIZE]) { 0 }, G_ASCII_DTOSTR_BUF_SIZE,
                                               session->export_height));
  if (session->export_dpi > 0)
    add_opt (argv, "--dpi", g_ascii_dtostr ((char[G_ASCII_DTOSTR_BUF_SIZE]) { 0 }, G_ASCII_DTOSTR_BUF_SIZE,
                                            session->export_dpi));
  if (session->export_title != NULL)
    add_opt (argv, "--title", session->export_title);
  /* last: they win over the colour map chosen above */
  for (char **e = session->export_options; e != NULL && *e != NULL; e++)
    g_ptr_array_add (argv, g_strdup (*e));
  g_ptr_array_add (argv, NULL);
  return (GStrv) g_ptr_array_free (g_steal_pointer (&argv), FALSE);
}

gboolean
rpe_session_modules_from_checkpoint (RpeSession         *session,
                                     const RpeTensorSet *given,
                                     char              **why)
{
  RpeExplorerState *st = session->state;
  RpeSpeMethod kind = rpe_explorer_state_get_spe_kind (st);
  const RpeSpeParams *p = rpe_explorer_state_get_params (st, kind);
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (RpeTensorMap) map = NULL;
  g_autoptr (GError) error = NULL;
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
  RpeSpeParams loaded = { 0 };
  gboolean gated = FALSE, same;

  if (p == NULL || session->checkpoint.path == NULL)
    {
      if (why != NULL)
        *why = g_strdup ("the parameters come from no checkpoint file");
      return FALSE;
    }
  g_object_get (st, "gated", &gated, NULL);
  if (given == NULL)
    set = rpe_demos_read_or_file (session->checkpoint.path, &error);
  if ((given != NULL || set != NULL) && session->checkpoint.map != NULL)
    {
      map = rpe_tensor_map_new ();
      for (char **m = session->checkpoint.map; *m != NULL && error == NULL; m++)
        rpe_tensor_map_parse (map, *m, &error);
    }
  if ((given == NULL && set == NULL) || error != NULL)
    {
      if (why != NULL)
        *why = g_strdup_printf ("the checkpoint cannot be read: %s", error->message);
      return FALSE;
    }
  sel.prefix = session->checkpoint.prefix;
  sel.layer = session->checkpoint.layer;
  sel.method = (int) kind;
  sel.map = map;
  if (!rpe_checkpoint_load_spe_full (given != NULL ? given : set, &sel, &loaded, NULL, &error))
    {
      if (why != NULL)
        *why = g_strdup_printf ("the checkpoint's module cannot be loaded: %s", error->message);
      return FALSE;
    }
  same = params_equal (p, &loaded, gated && p->gate != NULL)
         && (!(gated && p->gate != NULL) || loaded.gate != NULL);
  rpe_spe_params_clear (&loaded);
  if (!same && why != NULL)
    *why = g_strdup_printf ("the %s module was edited (its values differ from the checkpoint's)",
                            kind == RPE_SPE_SINE ? "sine" : "conv");
  return same;
}

char *
rpe_session_command_line (const char *const *argv,
                          const char        *out)
{
  GString *s = g_string_new ("rpe export");

  for (guint i = 0; argv != NULL && argv[i] != NULL; i++)
    {
      g_autofree char *q = NULL;
      gboolean plain = argv[i][0] != '\0';

      for (const char *c = argv[i]; *c != '\0' && plain; c++)
        plain = g_ascii_isalnum (*c) || strchr ("-_./:=,+@%", *c) != NULL;
      q = plain ? g_strdup (argv[i]) : g_shell_quote (argv[i]);
      g_string_append_c (s, ' ');
      g_string_append (s, q);
    }
  if (out != NULL)
    {
      g_autofree char *q = g_shell_quote (out);

      g_string_append (s, " -o ");
      g_string_append (s, q);
    }
  return g_string_free (s, FALSE);
}
