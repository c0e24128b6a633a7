/* rpe-undo.c: undo/redo steps as mementos of the explorer state. */
#include "config.h"

#include "rpe-undo.h"

#include <string.h>

#include <glib/gi18n-lib.h>

typedef struct
{
  GValue       *values;      /* one per read-write property of the state */
  guint         n_values;
  gboolean      have[2];
  RpeSpeParams  params[2];
  char         *source[2];
  float         fastrpb[2 * RPE_EXPLORER_FASTRPB_TAPS - 1];
  gsize         n_fastrpb;
  RpeExplorerCapture *capture;   /* the capture held (a reference) or NULL */
} Memento;

typedef struct
{
  Memento           *memento;  /* the parameters to restore */
  RpeExplorerChange  what;     /* the edit it reverts (undo) or repeats (redo) */
  RpeSpeMethod       kind;
} Step;

struct _RpeUndo
{
  GObject            parent_instance;

  RpeExplorerState  *state;
  gulong             changed_id;
  GParamSpec       **props;     /* the read-write properties */
  guint              n_props;
  Memento           *current;   /* the parameters now */
  GQueue             undo;      /* (Step *), newest first */
  GQueue             redo;
  gboolean           open;      /* the newest undo step may absorb the next array edit */
  gboolean           applying;
};

G_DEFINE_FINAL_TYPE (RpeUndo, rpe_undo, G_TYPE_OBJECT)

enum {
  SIGNAL_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

#define ARRAY_EDITS (RPE_EXPLORER_CHANGE_SPE_PARAMS | RPE_EXPLORER_CHANGE_GATE | RPE_EXPLORER_CHANGE_FASTRPB)

/* ---------------------------------------------------------------- mementos */

static void
memento_free (Memento *m)
{
  if (m == NULL)
    return;
  for (guint i = 0; i < m->n_values; i++)
    g_value_unset (&m->values[i]);
  g_free (m->values);
  rpe_explorer_capture_unref (m->capture);
  for (guint k = 0; k < 2; k++)
    {
      rpe_spe_params_clear (&m->params[k]);
      g_free (m->source[k]);
    }
  g_free (m);
}

static Memento *
memento_capture (RpeUndo *self)
{
  Memento *m = g_new0 (Memento, 1);
  const float *w;
  gsize count = 0;

  m->n_values = self->n_props;
  m->values = g_new0 (GValue, self->n_props);
  for (guint i = 0; i < self->n_props; i++)
    {
      g_value_init (&m->values[i], self->props[i]->value_type);
      g_object_get_property (G_OBJECT (self->state), self->props[i]->name, &m->values[i]);
    }
  for (guint k = 0; k < 2; k++)
    {
      const RpeSpeParams *p = rpe_explorer_state_get_params (self->state, (RpeSpeMethod) k);

      if (p != NULL && rpe_spe_params_copy (&m->params[k], p) == RPE_OK)
        {
          m->have[k] = TRUE;
          m->source[k] = g_strdup (rpe_explorer_state_get_source (self->state, (RpeSpeMethod) k));
        }
    }
  if (rpe_explorer_state_get_capture (self->state) != NULL)
    m->capture = rpe_explorer_capture_ref (rpe_explorer_state_get_capture (self->state));
  w = rpe_explorer_state_get_fastrpb_weights (self->state, &count);
  m->n_fastrpb = MIN (count, G_N_ELEMENTS (m->fastrpb));
  if (w != NULL)
    memcpy (m->fastrpb, w, m->n_fastrpb * sizeof (float));
  return m;
}

/* Gives the state the parameters of m (through its setters: the views follow). */
static void
memento_apply (RpeUndo           *self,
               const Memento     *m,
               RpeExplorerChange  what)
{
  if ((what & (RPE_EXPLORER_CHANGE_SPE_PARAMS | RPE_EXPLORER_CHANGE_GATE | RPE_EXPLORER_CHANGE_MODULES))
      && (m->have[0] || m->have[1]))
    rpe_explorer_state_set_modules (self->state, m->have[0] ? &m->params[0] : NULL, m->source[0],
                                    m->have[1] ? &m->params[1] : NULL, m->source[1], NULL);
  if (what & RPE_EXPLORER_CHANGE_FASTRPB)
    rpe_explorer_state_set_fastrpb_weights (self->state, m->fastrpb, m->n_fastrpb);
  /* the capture before the properties that draw it (content, capture-layer, length) */
  if (what & RPE_EXPLORER_CHANGE_CONTENT)
    rpe_explorer_state_restore_capture (self->state, m->capture);
  for (guint i = 0; i < m->n_values && i < self->n_props; i++)
    {
      GValue now = G_VALUE_INIT;

      g_value_init (&now, self->props[i]->value_type);
      g_object_get_property (G_OBJECT (self->state), self->props[i]->name, &now);
      if (g_param_values_cmp (self->props[i], &now, &m->values[i]) != 0)
        g_object_set_property (G_OBJECT (self->state), self->props[i]->name, &m->values[i]);
      g_value_unset (&now);
    }
}

static void
step_free (Step *s)
{
  memento_free (s->memento);
  g_free (s);
}

/* --------------------------------------------------------------- recording */

static void
state_changed (RpeExplorerState  *state,
               RpeExplorerChange  what,
               RpeUndo           *self)
{
  RpeSpeMethod kind = rpe_explorer_state_get_spe_kind (state);
  Step *top = g_queue_peek_head (&self->undo);

  if (self->applying)
    return;
  g_queue_clear_full (&self->redo, (GDestroyNotify) step_free);
  if (self->open && top != NULL && top->what == what && (what & ~ARRAY_EDITS) == 0 && top->kind == kind)
    {
      /* the same drag goes on: the step keeps its "before" */
      memento_free (self->current);
    }
  else
    {
      Step *s = g_new0 (Step, 1);

      s->memento = self->current;
      s->what = what;
      s->kind = kind;
      g_queue_push_head (&self->undo, s);
      while (self->undo.length > RPE_UNDO_MAX_STEPS)
        step_free (g_queue_pop_tail (&self->undo));
    }
  self->current = memento_capture (self);
  self->open = (what & ~ARRAY_EDITS) == 0;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* Moves the newest step of from to to, restoring its memento. */
static gboolean
travel (RpeUndo *self,
        GQueue  *from,
        GQueue  *to)
{
  Step *s = g_queue_pop_head (from);
  Step *back;

  if (s == NULL)
    return FALSE;
  back = g_new0 (Step, 1);
  back->memento = self->current;
  back->what = s->what;
  back->kind = s->kind;
  g_queue_push_head (to, back);
  self->applying = TRUE;
  memento_apply (self, s->memento, s->what);
  self->applying = FALSE;
  self->current = memento_capture (self);
  step_free (s);
  self->open = FALSE;
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
  return TRUE;
}

/* ----------------------------------------------------------------- public */

const char *
rpe_undo_describe (RpeExplorerChange what,
                   RpeSpeMethod      kind)
{
  if ((what & RPE_EXPLORER_CHANGE_MODULES) && (what & RPE_EXPLORER_CHANGE_GATE))
    return _("Load Parameters");
  if (what & RPE_EXPLORER_CHANGE_MODULES)
    return _("Change Filter Length L");
  if (what & RPE_EXPLORER_CHANGE_SPE_PARAMS)
    return kind == RPE_SPE_SINE ? _("Edit Sine Components") : _("Edit Conv Filters");
  if (what & RPE_EXPLORER_CHANGE_GATE)
    return _("Edit Gates");
  if (what & RPE_EXPLORER_CHANGE_FASTRPB)
    return _("Edit FastRPB Weights");
  /* only opening a capture changes both at once (rpe_explorer_state_set_capture) */
  if ((what & RPE_EXPLORER_CHANGE_CONTENT) && (what & RPE_EXPLORER_CHANGE_LENGTH))
    return _("Open Capture");
  if (what & RPE_EXPLORER_CHANGE_LENGTH)
    return _("Change Length N");
  if (what & RPE_EXPLORER_CHANGE_REALIZATIONS)
    return _("Change Realizations R");
  if (what & RPE_EXPLORER_CHANGE_SEED)
    return _("Change Seed");
  if (what & RPE_EXPLORER_CHANGE_HEAD)
    return _("Change Head h");
  if (what & RPE_EXPLORER_CHANGE_FEATURE)
    return _("Change Feature d");
  if (what & RPE_EXPLORER_CHANGE_METHOD)
    return _("Change Attention");
  if (what & RPE_EXPLORER_CHANGE_SPE_KIND)
    return _("Change SPE Module");
  if (what & RPE_EXPLORER_CHANGE_CAUSAL)
    return _("Toggle Causal");
  if (what & RPE_EXPLORER_CHANGE_GATED)
    return _("Toggle Gated");
  if (what & RPE_EXPLORER_CHANGE_FEATURE_MAP)
    return _("Change Feature Map");
  if (what & RPE_EXPLORER_CHANGE_TEMPLATE_KIND)
    return _("Change Templates");
  if (what & RPE_EXPLORER_CHANGE_CONTENT)
    return _("Change Queries and Keys");
  if (what & RPE_EXPLORER_CHANGE_LRPE)
    return _("Change LRPE");
  if (what & RPE_EXPLORER_CHANGE_TRAIN_LENGTH)
    return _("Change Training Length");
  if (what & RPE_EXPLORER_CHANGE_COLORMAP)
    return _("Change Colour Map");
  if (what & RPE_EXPLORER_CHANGE_COLOR_SCALE)
    return _("Change Colour Scale");
  return _("Change Parameters");
}

RpeUndo *
rpe_undo_new (RpeExplorerState *state)
{
  RpeUndo *self;
  GParamSpec **all;
  guint n_all = 0;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (state), NULL);
  self = g_object_new (RPE_TYPE_UNDO, NULL);
  self->state = g_object_ref (state);
  all = g_object_class_list_properties (G_OBJECT_GET_CLASS (state), &n_all);
  self->props = g_new0 (GParamSpec *, n_all + 1);
  for (guint i = 0; i < n_all; i++)
    if ((all[i]->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE && !(all[i]->flags & G_PARAM_CONSTRUCT_ONLY))
      self->props[self->n_props++] = all[i];
  g_free (all);
  self->current = memento_capture (self);
  self->changed_id = g_signal_connect (state, "changed", G_CALLBACK (state_changed), self);
  return self;
}

gboolean
rpe_undo_can_undo (RpeUndo *self)
{
  g_return_val_if_fail (RPE_IS_UNDO (self), FALSE);
  return self->undo.length > 0;
}

gboolean
rpe_undo_can_redo (RpeUndo *self)
{
  g_return_val_if_fail (RPE_IS_UNDO (self), FALSE);
  return self->redo.length > 0;
}

const char *
rpe_undo_get_undo_label (RpeUndo *self)
{
  Step *s;

  g_return_val_if_fail (RPE_IS_UNDO (self), NULL);
  s = g_queue_peek_head (&self->undo);
  return s != NULL ? rpe_undo_describe (s->what, s->kind) : NULL;
}

const char *
rpe_undo_get_redo_label (RpeUndo *self)
{
  Step *s;

  g_return_val_if_fail (RPE_IS_UNDO (self), NULL);
  s = g_queue_peek_head (&self->redo);
  return s != NULL ? rpe_undo_describe (s->what, s->kind) : NULL;
}

gboolean
rpe_undo_undo (RpeUndo *self)
{
  g_return_val_if_fail (RPE_IS_UNDO (self), FALSE);
  return travel (self, &self->undo, &self->redo);
}

gboolean
rpe_undo_redo (RpeUndo *self)
{
  g_return_val_if_fail (RPE_IS_UNDO (self), FALSE);
  return travel (self, &self->redo, &self->undo);
}

void
rpe_undo_seal (RpeUndo *self)
{
  g_return_if_fail (RPE_IS_UNDO (self));
  self->open = FALSE;
}

guint
rpe_undo_get_n_steps (RpeUndo *self)
{
  g_return_val_if_fail (RPE_IS_UNDO (self), 0);
  return self->undo.length;
}

static void
rpe_undo_dispose (GObject *object)
{
  RpeUndo *self = RPE_UNDO (object);

  if (self->state != NULL)
    g_clear_signal_handler (&self->changed_id, self->state);
  g_clear_object (&self->state);
  G_OBJECT_CLASS (rpe_undo_parent_class)->dispose (object);
}

static void
rpe_undo_finalize (GObject *object)
{
  RpeUndo *self = RPE_UNDO (object);

  g_queue_clear_full (&self->undo, (GDestroyNotify) step_free);
  g_queue_clear_full (&self->redo, (GDestroyNotify) step_free);
  memento_free (self->current);
  g_free (self->props);
  G_OBJECT_CLASS (rpe_undo_parent_class)->finalize (object);
}

static void
rpe_undo_class_init (RpeUndoClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = rpe_undo_dispose;
  object_class->finalize = rpe_undo_finalize;

  /**
   * RpeUndo::changed:
   *
   * The steps (and their names) changed.
   */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                          0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
rpe_undo_init (RpeUndo *self)
{
  g_queue_init (&self->undo);
  g_queue_init (&self->redo);
}
