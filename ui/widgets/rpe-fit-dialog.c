/* rpe-fit-dialog.c: the Fit panel (issue 16). */
#include "config.h"

#include "rpe-job-progress.h"
#include "rpe-fit-dialog.h"

#include <glib/gi18n.h>
#include <math.h>

#include "rpe-curve-view.h"
#include "rpe-error.h"
#include "rpe-heatmap-view.h"
#include "rpe-npy.h"

struct _RpeFitDialog
{
  AdwWindow         parent_instance;

  RpeExplorerState *state;

  GtkDropDown      *target;
  GtkButton        *file_button;
  GtkLabel         *file_label;
  GtkSpinButton    *r1;
  GtkSpinButton    *r2;
  GtkDropDown      *method;
  GtkSpinButton    *size;
  GtkCheckButton   *gated;
  GtkSpinButton    *heads;
  GtkSpinButton    *features;
  GtkSpinButton    *length;
  GtkButton        *fit_button;
  GtkButton        *cancel_button;
  GtkButton        *apply_button;
  GtkProgressBar   *progress;
  RpeProgressEstimate estimate;
  GtkLabel         *status;
  GtkSpinButton    *head;
  RpeCurveView     *curves;
  RpeHeatmapView   *attention;

  GtkFileChooserNative *chooser;
  char             *file;
  GCancellable     *running;
  guint64           serial;     /* bumped by every input change */
  RpeFitResult     *result;
  gboolean          updating;
};

G_DEFINE_FINAL_TYPE (RpeFitDialog, rpe_fit_dialog, ADW_TYPE_WINDOW)

static const char *target_names[] = { N_("ALiBi"), N_("KERPLE log"), N_("KERPLE power"), N_("File (.npy)"), NULL };

static const char *
target_caption (RpeFitTargetKind kind)
{
  switch (kind)
    {
    case RPE_FIT_TARGET_ALIBI:
      return "ALiBi";
    case RPE_FIT_TARGET_KERPLE_LOG:
      return "KERPLE log";
    case RPE_FIT_TARGET_KERPLE_POWER:
      return "KERPLE power";
    default:
      return "a file";
    }
}

/* ---------------------------------------------------------------- result */

static void
show_head (RpeFitDialog *self)
{
  RpeFitResult *r = self->result;
  RpeCurveSeries series[2] = { { 0 } };
  g_autofree double *tau = NULL;
  g_autofree double *fit = NULL;
  gsize n, len, h;
  double mb = 0.0, ml = 0.0;
  GBytes *bytes;

  if (r == NULL)
    {
      rpe_curve_view_set_series (self->curves, NULL, 0);
      rpe_heatmap_view_set_data (self->attention, NULL, 0, 0);
      return;
    }
  n = r->n;
  len = 2 * n - 1;
  h = MIN ((gsize) gtk_spin_button_get_value_as_int (self->head), r->config.n_heads - 1);
  tau = g_new (double, len);
  fit = g_new (double, len);
  for (gsize i = 0; i < len; i++)
    {
      mb += r->target[h * len + i];
      ml += r->fit[h * len + i];
    }
  /* the fit up to its per-head constant (softmax ignores it): shifted onto the target's mean */
  for (gsize i = 0; i < len; i++)
    {
      tau[i] = (double) i - (double) (n - 1);
      fit[i] = r->fit[h * len + i] + (mb - ml) / (double) len;
    }
  series[0].x = tau;
  series[0].y = r->target + h * len;
  series[0].n = len;
  series[0].label = _("target");
  series[1].x = tau;
  series[1].y = fit;
  series[1].n = len;
  series[1].label = _("fit");
  rpe_curve_view_set_series (self->curves, series, 2);

  bytes = g_bytes_new_with_free_func (r->attention + h * n * n, n * n * sizeof (float),
                                      (GDestroyNotify) rpe_fit_result_unref, rpe_fit_result_ref (r));
  rpe_heatmap_view_set_data (self->attention, bytes, n, n);
  g_bytes_unref (bytes);
}

static void
update_sensitivity (RpeFitDialog *self)
{
  gboolean busy = self->running != NULL;
  guint kind = gtk_drop_down_get_selected (self->target);

  gtk_widget_set_sensitive (GTK_WIDGET (self->fit_button), !busy);
  gtk_widget_set_visible (GTK_WIDGET (self->cancel_button), busy);
  gtk_widget_set_visible (GTK_WIDGET (self->progress), busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->apply_button), !busy && self->result != NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->head), self->result != NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->r1), kind == RPE_FIT_TARGET_KERPLE_LOG || kind == RPE_FIT_TARGET_KERPLE_POWER);
  gtk_widget_set_sensitive (GTK_WIDGET (self->r2), kind == RPE_FIT_TARGET_KERPLE_LOG || kind == RPE_FIT_TARGET_KERPLE_POWER);
  gtk_widget_set_sensitive (GTK_WIDGET (self->file_button), kind == RPE_FIT_TARGET_FILE);
}

static void
set_result (RpeFitDialog *self,
            RpeFitResult *result)
{
  g_clear_pointer (&self->result, rpe_fit_result_unref);
  self->result = result;
  if (result != NULL)
    {
      g_autofree char *text = g_strdup_printf (_("relative error %.9g"), result->error);

      gtk_label_set_text (self->status, text);
      gtk_spin_button_set_range (self->head, 0, (double) result->config.n_heads - 1);
    }
  show_head (self);
  update_sensitivity (self);
}

/* An input changed: a running fit is cancelled and any result dropped. */
static void
inputs_changed (RpeFitDialog *self)
{
  if (self->updating)
    return;
  self->serial++;
  if (self->running != NULL)
    {
      g_cancellable_cancel (self->running);
      g_clear_object (&self->running);
    }
  gtk_label_set_text (self->status, "");
  set_result (self, NULL);
}

static void
fit_progress (double   fraction,
              gpointer user_data)
{
  RpeFitDialog *self = user_data;

  rpe_job_progress_update (self->progress, &self->estimate, fraction);
}

static void
fit_done (GObject      *source,
          GAsyncResult *res,
          gpointer      user_data)
{
  RpeFitDialog *self = user_data;   /* a reference */
  g_autoptr (GError) error = NULL;
  RpeFitResult *result = rpe_compute_fit_finish (res, &error);
  GCancellable *cancellable = g_task_get_cancellable (G_TASK (res));

  if (self->running == cancellable && cancellable != NULL)
    g_clear_object (&self->running);
  if (result != NULL && result->serial == self->serial && !g_cancellable_is_cancelled (cancellable))
    set_result (self, result);
  else
    {
      g_clear_pointer (&result, rpe_fit_result_unref);
      if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
          && !g_cancellable_is_cancelled (cancellable))
        gtk_label_set_text (self->status, error->message);
      update_sensitivity (self);
    }
  g_object_unref (self);
}

/* The target (H, 2N-1) for the controls. */
static double *
make_target (RpeFitDialog *self,
             gsize         H,
             gsize         n,
             GError      **error)
{
  guint kind = gtk_drop_down_get_selected (self->target);
  g_autofree double *out = g_new (double, H * (2 * n - 1));
  RpeStatus st;

  if (kind == RPE_FIT_TARGET_ALIBI)
    st = rpe_fit_target_alibi (H, n, NULL, out);
  else if (kind == RPE_FIT_TARGET_KERPLE_LOG || kind == RPE_FIT_TARGET_KERPLE_POWER)
    {
      g_autofree double *r1 = g_new (double, H);
      g_autofree double *r2 = g_new (double, H);

      for (gsize h = 0; h < H; h++)
        {
          r1[h] = gtk_spin_button_get_value (self->r1);
          r2[h] = gtk_spin_button_get_value (self->r2);
        }
      st = rpe_fit_target_kerple (H, n, kind == RPE_FIT_TARGET_KERPLE_POWER, r1, r2, out);
    }
  else
    {
      g_autoptr (RpeTensor) w = NULL;
      gsize rows, m;

      if (self->file == NULL)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("Choose a target file first"));
          return NULL;
        }
      /* small by construction: a target file holds (H, 2N-1) values */
      if ((w = rpe_npy_read (self->file, error)) == NULL || !rpe_tensor_check_finite (w, error))
        return NULL;
      if (w->ndim == 1 && w->shape[0] % 2 == 1)
        rows = 1, m = (w->shape[0] + 1) / 2;
      else if (w->ndim == 2 && w->shape[0] == H && w->shape[1] % 2 == 1)
        rows = H, m = (w->shape[1] + 1) / 2;
      else
        {
          g_autofree char *shape = rpe_tensor_shape_string (w);

          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("The target must have shape (2N-1,) or (H, 2N-1) = (%zu, 2N-1), got %s"),
                         (size_t) H, shape);
          return NULL;
        }
      if (m < n)
        {
          rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                         _("The file covers |tau| < %zu, shorter than N = %zu"), (size_t) m, (size_t) n);
          return NULL;
        }
      st = rpe_fit_target_centred (H, n, w->data, rows, m, out);
    }
  if (st != RPE_OK)
    {
      rpe_set_error (error, st, _("Cannot make the target: %s"), rpe_status_to_string (st));
      return NULL;
    }
  return g_steal_pointer (&out);
}

static void
on_fit (RpeFitDialog *self)
{
  RpeFitConfig cfg = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree double *target = NULL;
  gsize n;

  inputs_changed (self);
  cfg.method = gtk_drop_down_get_selected (self->method) == 1 ? RPE_SPE_CONV : RPE_SPE_SINE;
  cfg.n_heads = (gsize) gtk_spin_button_get_value_as_int (self->heads);
  cfg.n_features = (gsize) gtk_spin_button_get_value_as_int (self->features);
  cfg.size = (gsize) gtk_spin_button_get_value_as_int (self->size);
  cfg.gated = gtk_check_button_get_active (self->gated);
  n = (gsize) gtk_spin_button_get_value_as_int (self->length);
  target = make_target (self, cfg.n_heads, n, &error);
  if (target == NULL)
    {
      gtk_label_set_text (self->status, error->message);
      return;
    }
  self->running = g_cancellable_new ();
  rpe_job_progress_begin (self->progress, &self->estimate);
  gtk_label_set_text (self->status, _("Fitting…"));
  rpe_compute_fit_async (&cfg, n, target, self->serial, fit_progress, self, self->running, fit_done,
                         g_object_ref (self));
  update_sensitivity (self);
}

static void
on_cancel (RpeFitDialog *self)
{
  if (self->running == NULL)
    return;
  inputs_changed (self);
  gtk_label_set_text (self->status, _("Cancelled"));
}

char *
rpe_fit_dialog_dup_source (RpeFitDialog *self)
{
  RpeFitResult *r;

  g_return_val_if_fail (RPE_IS_FIT_DIALOG (self), NULL);
  if ((r = self->result) == NULL)
    return NULL;
  return g_strdup_printf ("fit to %s (%s = %zu%s)", target_caption (gtk_drop_down_get_selected (self->target)),
                          r->config.method == RPE_SPE_SINE ? "K" : "L", (size_t) r->config.size,
                          r->config.gated ? ", gated" : "");
}

static void
on_apply (RpeFitDialog *self)
{
  RpeFitResult *r = self->result;
  g_autoptr (GError) error = NULL;
  g_autofree char *source = NULL;
  gboolean ok;

  if (r == NULL)
    return;
  source = rpe_fit_dialog_dup_source (self);
  if (r->config.method == RPE_SPE_SINE)
    ok = rpe_explorer_state_set_modules (self->state, &r->params, source, NULL, NULL, &error);
  else
    ok = rpe_explorer_state_set_modules (self->state, NULL, NULL, &r->params, source, &error);
  if (!ok)
    {
      gtk_label_set_text (self->status, error->message);
      return;
    }
  g_object_set (self->state, "spe-kind", (guint) r->config.method, NULL);
}

/* ---------------------------------------------------------------- file */

static void
chooser_response (GtkNativeDialog *chooser,
                  int              response,
                  RpeFitDialog    *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;

      if (path != NULL)
        rpe_fit_dialog_set_target_file (self, path);
    }
  g_clear_object (&self->chooser);
}

static void
on_choose_file (RpeFitDialog *self)
{
  GtkFileFilter *filter;

  if (self->chooser != NULL)
    return;
  self->chooser = gtk_file_chooser_native_new (_("Target Bias (.npy)"), GTK_WINDOW (self),
                                               GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, _("NumPy arrays (2N-1,) or (H, 2N-1)"));
  gtk_file_filter_add_pattern (filter, "*.npy");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), filter);
  g_object_unref (filter);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (self->chooser), TRUE);
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

/* ---------------------------------------------------------------- layout */

static GtkSpinButton *
spin (double lo, double hi, double step, guint digits, double value)
{
  GtkSpinButton *s = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (lo, hi, step));

  gtk_spin_button_set_digits (s, digits);
  gtk_spin_button_set_value (s, value);
  gtk_widget_set_valign (GTK_WIDGET (s), GTK_ALIGN_CENTER);
  return s;
}

static void
add_row (GtkGrid *grid, int row, const char *label, GtkWidget *w)
{
  GtkWidget *l = gtk_label_new_with_mnemonic (label);

  gtk_label_set_xalign (GTK_LABEL (l), 0.0f);
  gtk_label_set_mnemonic_widget (GTK_LABEL (l), w);
  gtk_grid_attach (grid, l, 0, row, 1, 1);
  gtk_grid_attach (grid, w, 1, row, 1, 1);
}

static void
changed_cb (RpeFitDialog *self)
{
  inputs_changed (self);
  update_sensitivity (self);
}

static void
rpe_fit_dialog_dispose (GObject *object)
{
  RpeFitDialog *self = RPE_FIT_DIALOG (object);

  if (self->running != NULL)
    g_cancellable_cancel (self->running);
  g_clear_object (&self->running);
  if (self->chooser != NULL)
    gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
  g_clear_object (&self->chooser);
  g_clear_pointer (&self->result, rpe_fit_result_unref);
  g_clear_object (&self->state);
  G_OBJECT_CLASS (rpe_fit_dialog_parent_class)->dispose (object);
}

static void
rpe_fit_dialog_finalize (GObject *object)
{
  RpeFitDialog *self = RPE_FIT_DIALOG (object);

  g_free (self->file);
  G_OBJECT_CLASS (rpe_fit_dialog_parent_class)->finalize (object);
}

static void
rpe_fit_dialog_class_init (RpeFitDialogClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = rpe_fit_dialog_dispose;
  G_OBJECT_CLASS (klass)->finalize = rpe_fit_dialog_finalize;
}

static void
rpe_fit_dialog_init (RpeFitDialog *self)
{
  GtkWidget *box, *header, *body, *grid, *side, *buttons, *views;
  const char *methods[] = { _("Sine (K sines)"), _("Conv (L taps)"), NULL };
  g_autofree const char **targets = g_new0 (const char *, G_N_ELEMENTS (target_names));
  int row = 0;

  for (gsize i = 0; target_names[i] != NULL; i++)
    targets[i] = _(target_names[i]);
  gtk_window_set_title (GTK_WINDOW (self), _("Fit SPE to a Bias"));
  gtk_window_set_default_size (GTK_WINDOW (self), 980, 560);

  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  header = adw_header_bar_new ();
  gtk_box_append (GTK_BOX (box), header);
  body = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start (body, 12);
  gtk_widget_set_margin_end (body, 12);
  gtk_widget_set_margin_top (body, 12);
  gtk_widget_set_margin_bottom (body, 12);
  gtk_widget_set_vexpand (body, TRUE);
  gtk_box_append (GTK_BOX (box), body);

  side = gtk_box_new (GTK_ORIENTATION_VERTICAL, 8);
  gtk_box_append (GTK_BOX (body), side);
  grid = gtk_grid_new ();
  gtk_grid_set_row_spacing (GTK_GRID (grid), 6);
  gtk_grid_set_column_spacing (GTK_GRID (grid), 12);
  gtk_box_append (GTK_BOX (side), grid);

  self->target = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (targets));
  add_row (GTK_GRID (grid), row++, _("_Target"), GTK_WIDGET (self->target));
  self->file_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("Choose _File…")));
  add_row (GTK_GRID (grid), row++, _("Target file"), GTK_WIDGET (self->file_button));
  self->file_label = GTK_LABEL (gtk_label_new (_("none")));
  gtk_label_set_ellipsize (self->file_label, PANGO_ELLIPSIZE_START);
  gtk_label_set_max_width_chars (self->file_label, 24);
  gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (self->file_label), 1, row++, 1, 1);
  self->r1 = spin (1e-3, 100.0, 0.1, 3, 1.0);
  add_row (GTK_GRID (grid), row++, _("KERPLE r_1"), GTK_WIDGET (self->r1));
  self->r2 = spin (1e-3, 2.0, 0.1, 3, 1.0);
  add_row (GTK_GRID (grid), row++, _("KERPLE r_2"), GTK_WIDGET (self->r2));
  self->method = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (methods));
  add_row (GTK_GRID (grid), row++, _("_Method"), GTK_WIDGET (self->method));
  self->size = spin (1, RPE_FIT_JOB_MAX_SIZE, 1, 0, 4);
  add_row (GTK_GRID (grid), row++, _("_K or L"), GTK_WIDGET (self->size));
  self->gated = GTK_CHECK_BUTTON (gtk_check_button_new_with_mnemonic (_("_Gated")));
  gtk_grid_attach (GTK_GRID (grid), GTK_WIDGET (self->gated), 1, row++, 1, 1);
  self->heads = spin (1, RPE_FIT_JOB_MAX_HEADS, 1, 0, 1);
  add_row (GTK_GRID (grid), row++, _("_Heads H"), GTK_WIDGET (self->heads));
  self->features = spin (1, RPE_FIT_JOB_MAX_FEAT, 1, 0, 1);
  add_row (GTK_GRID (grid), row++, _("_Features D"), GTK_WIDGET (self->features));
  self->length = spin (2, RPE_FIT_JOB_MAX_LENGTH, 1, 0, 64);
  add_row (GTK_GRID (grid), row++, _("_Length N"), GTK_WIDGET (self->length));

  buttons = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->fit_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Fit")));
  gtk_widget_add_css_class (GTK_WIDGET (self->fit_button), "suggested-action");
  self->cancel_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Cancel")));
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->fit_button));
  gtk_box_append (GTK_BOX (buttons), GTK_WIDGET (self->cancel_button));
  gtk_box_append (GTK_BOX (side), buttons);
  self->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_box_append (GTK_BOX (side), GTK_WIDGET (self->progress));
  self->status = GTK_LABEL (gtk_label_new (""));
  gtk_label_set_wrap (self->status, TRUE);
  gtk_label_set_selectable (self->status, TRUE);
  gtk_label_set_xalign (self->status, 0.0f);
  gtk_box_append (GTK_BOX (side), GTK_WIDGET (self->status));
  self->head = spin (0, 0, 1, 0, 0);
  grid = gtk_grid_new ();
  gtk_grid_set_column_spacing (GTK_GRID (grid), 12);
  add_row (GTK_GRID (grid), 0, _("Show _head"), GTK_WIDGET (self->head));
  gtk_box_append (GTK_BOX (side), grid);
  self->apply_button = GTK_BUTTON (gtk_button_new_with_mnemonic (_("_Apply to the Explorer")));
  gtk_box_append (GTK_BOX (side), GTK_WIDGET (self->apply_button));

  views = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_box_set_homogeneous (GTK_BOX (views), TRUE);
  gtk_widget_set_hexpand (views, TRUE);
  gtk_box_append (GTK_BOX (body), views);
  self->curves = RPE_CURVE_VIEW (rpe_curve_view_new ());
  rpe_curve_view_set_title (self->curves, _("Logit profiles"));
  rpe_curve_view_set_axis_labels (self->curves, _("τ"), _("logit"));
  gtk_widget_set_hexpand (GTK_WIDGET (self->curves), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->curves), TRUE);
  gtk_box_append (GTK_BOX (views), GTK_WIDGET (self->curves));
  self->attention = RPE_HEATMAP_VIEW (rpe_heatmap_view_new ());
  rpe_heatmap_view_set_title (self->attention, _("Attention the fit induces"));
  rpe_heatmap_view_set_equal_aspect (self->attention, TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->attention), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->attention), TRUE);
  gtk_box_append (GTK_BOX (views), GTK_WIDGET (self->attention));
  adw_window_set_content (ADW_WINDOW (self), box);

  g_signal_connect_swapped (self->target, "notify::selected", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->method, "notify::selected", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->gated, "toggled", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->r1, "value-changed", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->r2, "value-changed", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->size, "value-changed", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->heads, "value-changed", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->features, "value-changed", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->length, "value-changed", G_CALLBACK (changed_cb), self);
  g_signal_connect_swapped (self->head, "value-changed", G_CALLBACK (show_head), self);
  g_signal_connect_swapped (self->fit_button, "clicked", G_CALLBACK (on_fit), self);
  g_signal_connect_swapped (self->cancel_button, "clicked", G_CALLBACK (on_cancel), self);
  g_signal_connect_swapped (self->apply_button, "clicked", G_CALLBACK (on_apply), self);
  g_signal_connect_swapped (self->file_button, "clicked", G_CALLBACK (on_choose_file), self);
  update_sensitivity (self);
}

RpeFitDialog *
rpe_fit_dialog_new (GtkWindow        *parent,
                    RpeExplorerState *state)
{
  RpeFitDialog *self;
  const RpeSpeParams *p;

  g_return_val_if_fail (RPE_IS_EXPLORER_STATE (state), NULL);
  self = g_object_new (RPE_TYPE_FIT_DIALOG, "transient-for", parent, "destroy-with-parent", TRUE, NULL);
  self->state = g_object_ref (state);
  self->updating = TRUE;
  p = rpe_explorer_state_get_params (state, rpe_explorer_state_get_spe_kind (state));
  if (p != NULL)
    {
      gtk_spin_button_set_value (self->heads, (double) MIN (p->n_heads, RPE_FIT_JOB_MAX_HEADS));
      gtk_spin_button_set_value (self->features, (double) MIN (p->n_features, RPE_FIT_JOB_MAX_FEAT));
      gtk_drop_down_set_selected (self->method, p->method == RPE_SPE_CONV ? 1 : 0);
      gtk_spin_button_set_value (self->size, (double) (p->method == RPE_SPE_CONV ? p->kernel : p->n_sines));
      gtk_check_button_set_active (self->gated, p->gate != NULL);
    }
  gtk_spin_button_set_value (self->length, (double) CLAMP (rpe_explorer_state_get_length (state), 2,
                                                           RPE_FIT_JOB_MAX_LENGTH));
  self->updating = FALSE;
  return self;
}

/* ---------------------------------------------------------------- API */

void
rpe_fit_dialog_set_target (RpeFitDialog *self, RpeFitTargetKind kind)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self) && (guint) kind <= RPE_FIT_TARGET_FILE);
  gtk_drop_down_set_selected (self->target, kind);
}

void
rpe_fit_dialog_set_target_file (RpeFitDialog *self, const char *path)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self));
  g_free (self->file);
  self->file = g_strdup (path);
  gtk_label_set_text (self->file_label, path != NULL ? path : _("none"));
  gtk_drop_down_set_selected (self->target, RPE_FIT_TARGET_FILE);
  changed_cb (self);
}

void
rpe_fit_dialog_set_kerple (RpeFitDialog *self, double r1, double r2)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self));
  gtk_spin_button_set_value (self->r1, r1);
  gtk_spin_button_set_value (self->r2, r2);
}

void
rpe_fit_dialog_set_method (RpeFitDialog *self, RpeSpeMethod method, gsize size)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self));
  gtk_drop_down_set_selected (self->method, method == RPE_SPE_CONV ? 1 : 0);
  gtk_spin_button_set_value (self->size, (double) size);
}

void
rpe_fit_dialog_set_gated (RpeFitDialog *self, gboolean gated)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self));
  gtk_check_button_set_active (self->gated, gated);
}

void
rpe_fit_dialog_set_sizes (RpeFitDialog *self, gsize heads, gsize features, gsize length)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self));
  gtk_spin_button_set_value (self->heads, (double) heads);
  gtk_spin_button_set_value (self->features, (double) features);
  gtk_spin_button_set_value (self->length, (double) length);
}

void
rpe_fit_dialog_fit (RpeFitDialog *self)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self));
  if (gtk_widget_is_sensitive (GTK_WIDGET (self->fit_button)))
    g_signal_emit_by_name (self->fit_button, "clicked");
}

void
rpe_fit_dialog_cancel (RpeFitDialog *self)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self));
  g_signal_emit_by_name (self->cancel_button, "clicked");
}

void
rpe_fit_dialog_apply (RpeFitDialog *self)
{
  g_return_if_fail (RPE_IS_FIT_DIALOG (self));
  if (gtk_widget_is_sensitive (GTK_WIDGET (self->apply_button)))
    g_signal_emit_by_name (self->apply_button, "clicked");
}

gboolean
rpe_fit_dialog_is_busy (RpeFitDialog *self)
{
  g_return_val_if_fail (RPE_IS_FIT_DIALOG (self), FALSE);
  return self->running != NULL;
}

RpeFitResult *
rpe_fit_dialog_get_result (RpeFitDialog *self)
{
  g_return_val_if_fail (RPE_IS_FIT_DIALOG (self), NULL);
  return self->result;
}

const char *
rpe_fit_dialog_get_status (RpeFitDialog *self)
{
  g_return_val_if_fail (RPE_IS_FIT_DIALOG (self), NULL);
  return gtk_label_get_text (self->status);
}

double
rpe_fit_dialog_get_progress (RpeFitDialog *self)
{
  g_return_val_if_fail (RPE_IS_FIT_DIALOG (self), 0.0);
  return self->running != NULL ? gtk_progress_bar_get_fraction (self->progress) : 0.0;
}
