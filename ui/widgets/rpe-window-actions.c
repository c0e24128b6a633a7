/* rpe-window-actions.c: the window's actions and shortcuts (win.*), the file
 * chooser, recent files, the tensor browser and .npy content. */
#include "config.h"

#include "rpe-toast-queue.h"
#include "rpe-window-private.h"

#include <glib/gi18n.h>

#include "rpe-checkpoint.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-conv-spe-2d.h"
#include "rpe-error.h"
#include "rpe-fastrpb.h"
#include "rpe-demos.h"
#include "rpe-fit-dialog.h"
#include "rpe-tour-bar.h"
#include "rpe-npy.h"

static const char *view_names[RPE_WINDOW_N_VIEWS] = { "templates", "attention", "curves", "teaching", "outputs" };

/* ------------------------------------------------------------ open files */

static void
chooser_response (GtkNativeDialog *dialog,
                  int              response,
                  RpeWindow       *self)
{
  gboolean npy = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (dialog), "npy"));

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));

      if (npy)
        _rpe_window_open_npy (self, file);
      else
        rpe_window_open_file (self, file);
    }
  gtk_native_dialog_destroy (dialog);
  if (self->chooser == GTK_FILE_CHOOSER_NATIVE (dialog))
    g_clear_object (&self->chooser);
}

static void
show_chooser (RpeWindow *self,
              gboolean   npy)
{
  GtkFileFilter *filter = gtk_file_filter_new ();

  if (self->chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  self->chooser = gtk_file_chooser_native_new (npy ? _("Load Queries/Keys") : _("Open Checkpoint or Session"),
                                               GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN,
                                               _("_Open"), _("_Cancel"));
  if (npy)
    {
      gtk_file_filter_set_name (filter, _("NumPy arrays (.npy)"));
      gtk_file_filter_add_suffix (filter, "npy");
    }
  else
    {
      static const char *const suffixes[] = { "safetensors", "npy", "npz", "pt", "pth", NULL };
      GtkFileFilter *only;

      gtk_file_filter_set_name (filter, _("Checkpoints and sessions"));
      for (guint i = 0; suffixes[i] != NULL; i++)
        gtk_file_filter_add_suffix (filter, suffixes[i]);
      gtk_file_filter_add_suffix (filter, "rpe-session");
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), filter);
      g_object_unref (filter);
      only = gtk_file_filter_new ();
      gtk_file_filter_set_name (only, _("Checkpoints (.safetensors, .npy, .npz, .pt)"));
      for (guint i = 0; suffixes[i] != NULL; i++)
        gtk_file_filter_add_suffix (only, suffixes[i]);
      gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), only);
      g_object_unref (only);
      filter = gtk_file_filter_new ();
      gtk_file_filter_set_name (filter, _("RPE Studio sessions (.rpe-session)"));
      gtk_file_filter_add_suffix (filter, "rpe-session");
    }
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), filter);
  g_object_unref (filter);
  g_object_set_data (G_OBJECT (self->chooser), "npy", GUINT_TO_POINTER (npy));
  g_signal_connect (self->chooser, "response", G_CALLBACK (chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

static void
action_open (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  show_chooser (RPE_WINDOW (widget), FALSE);
}

static void
action_open_npy (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  show_chooser (RPE_WINDOW (widget), TRUE);
}

static void
action_open_recent (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  g_autoptr (GFile) file = g_file_new_for_uri (g_variant_get_string (parameter, NULL));

  rpe_window_open_file (RPE_WINDOW (widget), file);
}

void
_rpe_window_open_npy (RpeWindow *self,
                      GFile     *file)
{
  g_autofree char *path = g_file_get_path (file);
  g_autoptr (GError) error = NULL;
  RpeTensor *tensor = path != NULL ? rpe_npy_read (path, &error) : NULL;

  if (tensor == NULL)
    {
      g_autofree char *text = g_strdup_printf (_("Could not load the queries/keys: %s"),
                                               error != NULL ? error->message : _("not a local file"));

      _rpe_window_show_message (self, text);
      return;
    }
  if (!rpe_explorer_state_set_npy_content (self->state, tensor->data, tensor->ndim, tensor->shape, &error))
    {
      g_autofree char *text = g_strdup_printf (_("Could not use the queries/keys: %s"), error->message);

      _rpe_window_show_message (self, text);
    }
  else
    {
      _rpe_window_set_content_path (self, path);
      _rpe_window_show_message (self, NULL);
    }
  rpe_tensor_free (tensor);
}

void
_rpe_window_update_recent_menu (RpeWindow *self)
{
  GList *items;
  guint count = 0;

  if (self->recent_menu == NULL)
    return;
  g_menu_remove_all (self->recent_menu);
  items = gtk_recent_manager_get_items (gtk_recent_manager_get_default ());
  for (GList *l = items; l != NULL && count < 8; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      const char *uri = gtk_recent_info_get_uri (info);
      GMenuItem *item;

      if (!g_str_has_suffix (uri, ".safetensors") && !g_str_has_suffix (uri, ".npz")
          && !g_str_has_suffix (uri, ".pt") && !g_str_has_suffix (uri, ".pth")
          && !g_str_has_suffix (uri, RPE_SESSION_SUFFIX))
        continue;
      item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);
      g_menu_item_set_action_and_target (item, "win.open-recent", "s", uri);
      g_menu_append_item (self->recent_menu, item);
      g_object_unref (item);
      count++;
    }
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

/* ------------------------------------------------- trained LRPE and FastRPB */

gboolean
_rpe_window_set_fastrpb_tensor (RpeWindow       *self,
                                const RpeTensor *w,
                                GError         **error)
{
  const gsize T = RPE_EXPLORER_FASTRPB_TAPS;
  RpeFastrpbLayout layout = RPE_FASTRPB_LAYOUT_CENTRED;
  gsize rows, width, m, n, row;
  float taps[2 * RPE_EXPLORER_FASTRPB_TAPS - 1] = { 0 };
  g_autofree float *centred = NULL;
  RpeStatus st;

  if (w->ndim == 3 && w->shape[0] == 1)
    {
      rows = w->shape[1];
      width = w->shape[2];
      layout = rpe_fastrpb_reference_layout (width);
    }
  else if (w->ndim == 1 || w->ndim == 2)
    {
      rows = w->ndim == 1 ? 1 : w->shape[0];
      width = w->shape[w->ndim - 1];
    }
  else
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          _("%s: FastRPB weights must have shape (X,), (H, X) or (1, H, X)"), w->name);
  m = rpe_fastrpb_layout_length (layout, width);
  if (m == 0 || rows == 0 || !rpe_tensor_check_finite (w, error))
    return error == NULL || *error == NULL
           ? rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT, _("%s: %zu weights are not a FastRPB layout"),
                            w->name, (size_t) width)
           : FALSE;
  n = MIN (m, T);
  centred = g_new (float, rows * (2 * n - 1));
  st = rpe_fastrpb_to_centred (layout, rows, width, w->data, n, centred);
  if (st != RPE_OK)
    return rpe_set_error (error, st, "%s: %s", w->name, rpe_status_to_string (st));
  row = MIN (rpe_explorer_state_get_head (self->state), rows - 1);
  for (gsize i = 0; i < 2 * n - 1; i++)
    taps[i + (T - n)] = centred[row * (2 * n - 1) + i];
  rpe_explorer_state_set_fastrpb_weights (self->state, taps, G_N_ELEMENTS (taps));
  return TRUE;
}

/* The role of an LRPE parameter file from its shape (docs/math.md, section 7), or its name for a 1-D array. */
static gboolean
lrpe_file_role (const RpeTensor *t,
                const char      *base,
                RpeRole         *role)
{
  g_autofree char *lower = g_ascii_strdown (base, -1);

  if (t->ndim == 3 && t->shape[0] == 1 && t->shape[2] == 1 && t->shape[1] > 1)
    *role = RPE_ROLE_LRPE_V;
  else if (t->ndim == 3 && t->shape[0] == 1 && t->shape[1] == 1)
    *role = RPE_ROLE_LRPE_THETA;
  else if ((t->ndim == 3 && t->shape[0] == 1 && t->shape[1] > 1 && t->shape[2] > 1) || t->ndim == 2)
    *role = RPE_ROLE_LRPE_PERMUTATION;
  else if (strstr (lower, "theta") != NULL)
    *role = RPE_ROLE_LRPE_THETA;
  else if (strstr (lower, "perm") != NULL)
    *role = RPE_ROLE_LRPE_PERMUTATION;
  else if (lower[0] == 'v')
    *role = RPE_ROLE_LRPE_V;
  else
    return FALSE;
  return TRUE;
}

gboolean
rpe_window_open_lrpe_files (RpeWindow  *self,
                            GFile     **files,
                            guint       n_files,
                            GError    **error)
{
  RpeTensor *tensors[3] = { NULL, NULL, NULL };   /* v, theta, permutation */
  g_autoptr (GString) label = g_string_new ("files ");
  g_autoptr (GPtrArray) trained = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_lrpe_trained_free);
  GError *local = NULL;
  RpeLrpeTrained *t = NULL;
  gboolean ok = FALSE;

  g_return_val_if_fail (RPE_IS_WINDOW (self), FALSE);
  for (guint i = 0; i < n_files; i++)
    {
      g_autofree char *path = g_file_get_path (files[i]);
      g_autofree char *base = g_file_get_basename (files[i]);
      RpeTensor *x = path != NULL ? rpe_npy_read_int_ok (path, &local) : NULL;
      RpeRole role;

      if (x == NULL)
        {
          if (local == NULL)
            local = g_error_new (RPE_ERROR, RPE_ERROR_IO, _("%s is not a local file"), base);
          goto out;
        }
      if (!lrpe_file_role (x, base, &role))
        {
          g_autofree char *shape = rpe_tensor_shape_string (x);

          local = g_error_new (RPE_ERROR, RPE_ERROR_INVALID_ARGUMENT,
                               _("%s: an array of shape %s is not an LRPE v (1, D, 1), theta (1, 1, n) or "
                                 "permutation buffer (1, max_positions, D)"), base, shape);
          rpe_tensor_free (x);
          goto out;
        }
      g_clear_pointer (&tensors[role - RPE_ROLE_LRPE_V], rpe_tensor_free);
      tensors[role - RPE_ROLE_LRPE_V] = x;
      g_string_append_printf (label, "%s%s (%s)", i > 0 ? ", " : "", base, rpe_role_to_string (role));
    }
  t = rpe_lrpe_trained_new (tensors[0], tensors[1], tensors[2], "the LRPE files", &local);
  if (t == NULL)
    goto out;
  g_ptr_array_add (trained, t);
  _rpe_window_set_lrpe_choices (self, trained, (const char *[]) { label->str, NULL }, FALSE, TRUE);
  ok = TRUE;

out:
  for (int i = 0; i < 3; i++)
    rpe_tensor_free (tensors[i]);
  if (!ok)
    {
      g_autofree char *text = g_strdup_printf (_("Could not load the LRPE parameters: %s"), local->message);

      _rpe_window_show_message (self, text);
      g_propagate_error (error, local);
    }
  else
    _rpe_window_show_message (self, NULL);
  return ok;
}

static void
lrpe_chooser_response (GtkNativeDialog *dialog,
                       int              response,
                       RpeWindow       *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GListModel) list = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      guint n = g_list_model_get_n_items (list);
      g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_object_unref);

      for (guint i = 0; i < n; i++)
        g_ptr_array_add (files, g_list_model_get_item (list, i));
      rpe_window_open_lrpe_files (self, (GFile **) files->pdata, files->len, NULL);
    }
  gtk_native_dialog_destroy (dialog);
  if (self->chooser == GTK_FILE_CHOOSER_NATIVE (dialog))
    g_clear_object (&self->chooser);
}

static void
action_open_lrpe (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  GtkFileFilter *filter = gtk_file_filter_new ();

  if (self->chooser != NULL)
    {
      gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
      g_clear_object (&self->chooser);
    }
  self->chooser = gtk_file_chooser_native_new (_("Open LRPE Parameters (v, θ, permutation)"), GTK_WINDOW (self),
                                               GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (self->chooser), TRUE);
  gtk_file_filter_set_name (filter, _("NumPy arrays (.npy)"));
  gtk_file_filter_add_suffix (filter, "npy");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), filter);
  g_object_unref (filter);
  g_signal_connect (self->chooser, "response", G_CALLBACK (lrpe_chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

/* The LRPE and FastRPB roles assigned in the tensor browser: used; TRUE if any was. */
static gboolean
use_mapped_trained (RpeWindow          *self,
                    RpeCheckpointData  *data,
                    const RpeTensorMap *map,
                    const char         *base)
{
  gboolean used = FALSE;

  if (rpe_tensor_map_has_any (map, RPE_ROLE_LRPE_V, RPE_ROLE_LRPE_PERMUTATION))
    {
      const RpeTensor *ts[3];
      g_autoptr (GError) error = NULL;
      g_autoptr (GPtrArray) trained = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_lrpe_trained_free);
      g_autofree char *mapped = rpe_tensor_map_to_string (map);
      g_autofree char *label = g_strdup_printf ("checkpoint %s, mapped %s", base, mapped);
      RpeLrpeTrained *t;

      for (int r = 0; r < 3; r++)
        {
          const char *name = rpe_tensor_map_get (map, (RpeRole) (RPE_ROLE_LRPE_V + r));

          ts[r] = name != NULL ? rpe_tensor_set_lookup (data->set, name) : NULL;
        }
      t = rpe_lrpe_trained_new (ts[0], ts[1], ts[2], label, &error);
      if (t == NULL)
        {
          g_autofree char *text = g_strdup_printf (_("Could not use the mapped LRPE parameters: %s"), error->message);

          _rpe_window_show_message (self, text);
          return TRUE;
        }
      g_ptr_array_add (trained, t);
      _rpe_window_set_lrpe_choices (self, trained, (const char *[]) { label, NULL }, FALSE, TRUE);
      g_object_set (self->state, "method", RPE_EXPLORER_METHOD_LRPE, NULL);
      _rpe_window_show_message (self, NULL);
      used = TRUE;
    }
  if (rpe_tensor_map_get (map, RPE_ROLE_FASTRPB_W) != NULL)
    {
      const RpeTensor *w = rpe_tensor_set_lookup (data->set, rpe_tensor_map_get (map, RPE_ROLE_FASTRPB_W));
      g_autoptr (GError) error = NULL;

      if (w == NULL || !_rpe_window_set_fastrpb_tensor (self, w, &error))
        {
          g_autofree char *text = g_strdup_printf (_("Could not use the mapped FastRPB weights: %s"),
                                                   error != NULL ? error->message : _("no such tensor"));

          _rpe_window_show_message (self, text);
          return TRUE;
        }
      if (!used)
        g_object_set (self->state, "method", RPE_EXPLORER_METHOD_FASTRPB, NULL);
      _rpe_window_show_message (self, NULL);
      used = TRUE;
    }
  return used;
}

static void
action_grid (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);

  if (rpe_explorer_state_get_conv2d (self->state, NULL) == NULL)
    {
      rpe_toast_queue_add (self->toasts, adw_toast_new (_("Open a checkpoint with a 2-D convSPE module "
                                                          "(filters (H*D, 1, L1, L2)) first.")));
      return;
    }
  if (self->grid_window == NULL)
    {
      self->grid_window = rpe_grid_window_new (GTK_WINDOW (self), self->state);
      g_object_add_weak_pointer (G_OBJECT (self->grid_window), (gpointer *) &self->grid_window);
    }
  gtk_window_present (GTK_WINDOW (self->grid_window));
}

RpeGridWindow *
rpe_window_get_grid_window (RpeWindow *self)
{
  g_return_val_if_fail (RPE_IS_WINDOW (self), NULL);
  return self->grid_window;
}

/* --------------------------------------------------------- tensor browser */

static void
module_chosen (RpeTensorBrowser *browser,
               const char       *prefix,
               int               layer,
               RpeWindow        *self)
{
  RpeCheckpointData *data = rpe_tensor_browser_get_data (browser);
  const RpeTensorMap *map = rpe_tensor_browser_get_map (browser);
  RpeSpeSelection sel = RPE_SPE_SELECTION_INIT;
  RpeSpeParams params = { 0 };
  g_autoptr (GError) error = NULL;
  g_autofree char *base = g_path_get_basename (data->path);
  g_autofree char *source = NULL;
  g_autofree char *note = NULL;
  g_autofree char *mapped = NULL;

  /* LRPE and FastRPB roles: those parameters; with no SPE role mapped, nothing else changes */
  if (use_mapped_trained (self, data, map, base)
      && !rpe_tensor_map_has_any (map, RPE_ROLE_SINE_FREQS, RPE_ROLE_GATE))
    return;
  sel.prefix = prefix;
  sel.layer = layer;
  sel.map = rpe_tensor_map_is_empty (map) ? NULL : map;
  if (sel.map != NULL
      && (rpe_tensor_map_has_any (map, RPE_ROLE_SINE_FREQS, RPE_ROLE_SINE_GAINS)
          || rpe_tensor_map_has_any (map, RPE_ROLE_CONV_Q, RPE_ROLE_CONV_K)))
    sel.prefix = NULL;             /* the mapped tensors name the module */
  if (!rpe_checkpoint_load_spe_full (data->set, &sel, &params, &note, &error))
    {
      g_autofree char *text = g_strdup_printf (_("Could not load module “%s”: %s"),
                                               prefix != NULL ? prefix : _("(mapped)"), error->message);

      _rpe_window_show_message (self, text);
      return;
    }
  {
    gsize heads = rpe_tensor_browser_get_heads (browser);

    if (heads > 0 && heads != params.n_heads && rpe_spe_params_set_heads (&params, heads) == RPE_OK)
      {
        g_autofree char *shape = g_strdup_printf (_("read as H = %zu × D = %zu"), params.n_heads, params.n_features);
        char *both = note != NULL ? g_strdup_printf ("%s; %s", note, shape) : g_strdup (shape);

        g_free (note);
        note = both;
      }
  }
  mapped = sel.map != NULL ? rpe_tensor_map_to_string (map) : NULL;
  if (mapped != NULL)
    source = layer >= 0 ? g_strdup_printf ("%s, mapped %s, layer %d", base, mapped, layer)
                        : g_strdup_printf ("%s, mapped %s", base, mapped);
  else
    source = layer >= 0 ? g_strdup_printf (_("%s module “%s”, layer %d"), base, prefix, layer)
                        : g_strdup_printf (_("%s module “%s”"), base, prefix);
  {
    /* the session remembers how the module was read (`rpe export --prefix --layer --map`) */
    g_auto (GStrv) roles = mapped != NULL ? g_strsplit (mapped, ", ", -1) : NULL;

    _rpe_window_set_source (self, data->path, sel.prefix, layer, (const char *const *) roles);
  }
  if (rpe_conv_spe_is_2d (&params))
    {
      /* a 2-D module goes to the grid window */
      if (rpe_explorer_state_set_conv2d (self->state, &params, source, &error))
        {
          g_object_set (self->state, "gated", params.gate != NULL, NULL);
          _rpe_window_show_message (self, NULL);
          gtk_widget_activate_action (GTK_WIDGET (self), "win.grid", NULL);
        }
      else
        _rpe_window_show_message (self, error->message);
      rpe_spe_params_clear (&params);
      return;
    }
  if (params.method == RPE_SPE_SINE)
    rpe_explorer_state_set_modules (self->state, &params, source, NULL, NULL, &error);
  else
    rpe_explorer_state_set_modules (self->state, NULL, NULL, &params, source, &error);
  /* a gated module shows its gated templates, as the CLI does */
  g_object_set (self->state, "spe-kind", params.method, "gated", params.gate != NULL, NULL);
  _rpe_window_show_message (self, NULL);
  if (note != NULL)
    rpe_toast_queue_add (self->toasts, adw_toast_new (note));
  rpe_spe_params_clear (&params);
}

static void
action_browse_tensors (GtkWidget  *widget,
                       const char *action_name,
                       GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);

  if (self->checkpoint == NULL)
    {
      rpe_toast_queue_add (self->toasts, adw_toast_new (_("Open a checkpoint first (the demo is built in).")));
      return;
    }
  if (self->browser != NULL)
    {
      g_object_remove_weak_pointer (G_OBJECT (self->browser), (gpointer *) &self->browser);
      gtk_window_destroy (GTK_WINDOW (self->browser));
    }
  self->browser = rpe_tensor_browser_new (GTK_WINDOW (self), self->checkpoint);
  g_object_add_weak_pointer (G_OBJECT (self->browser), (gpointer *) &self->browser);
  g_signal_connect_object (self->browser, "module-chosen", G_CALLBACK (module_chosen), self, 0);
  gtk_window_present (GTK_WINDOW (self->browser));
}

static void
action_load_demo (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  g_autoptr (GBytes) bytes = g_resources_lookup_data (RPE_DEMO_RESOURCE, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  g_autoptr (RpeTensorSet) set = bytes != NULL ? rpe_checkpoint_read_bytes (bytes, "demo", NULL) : NULL;
  RpeSpeParams sine = { 0 }, conv = { 0 };

  if (set == NULL || !rpe_checkpoint_load_spe (set, "sine", -1, &sine, NULL)
      || !rpe_checkpoint_load_spe (set, "conv", -1, &conv, NULL))
    {
      _rpe_window_show_message (self, _("The demo checkpoint is not available in this build."));
    }
  else
    {
      rpe_explorer_state_set_modules (self->state, &sine, "demo module “sine”", &conv, "demo module “conv”", NULL);
      self->from_demo = TRUE;
      _rpe_window_set_source (self, "demo", NULL, -1, NULL);
      _rpe_window_show_message (self, NULL);
    }
  rpe_spe_params_clear (&sine);
  rpe_spe_params_clear (&conv);
}

static void
action_open_demo (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  g_autofree char *spec = g_strconcat ("demo:", g_variant_get_string (parameter, NULL), NULL);

  rpe_window_open_demo (RPE_WINDOW (widget), spec);
}

/* The trained demos (tools/train-demos.py) whose SPE module the explorer shows, each with its task
 * and accuracies; the LRPE, FastRPB and APE demos are for `rpe curves` and `rpe compute`. */
void
_rpe_window_fill_demos_menu (RpeWindow *self)
{
  g_auto (GStrv) names = rpe_demos_list ();

  if (self->demos_menu == NULL)
    return;
  g_menu_remove_all (self->demos_menu);
  for (guint i = 0; names[i] != NULL; i++)
    {
      g_autofree char *spec = g_strconcat ("demo:", names[i], NULL);
      g_autoptr (GHashTable) meta = rpe_demos_metadata (spec, NULL);
      g_autoptr (GMenuItem) item = NULL;
      g_autofree char *label = NULL;
      const char *encoding, *a1, *a4, *n_train;
      guint ntr;

      if (meta == NULL || !g_str_has_suffix (names[i], "-spe"))
        continue;
      encoding = g_hash_table_lookup (meta, "encoding");
      a1 = g_hash_table_lookup (meta, "accuracy_n_train");
      a4 = g_hash_table_lookup (meta, "accuracy_4n_train");
      n_train = g_hash_table_lookup (meta, "n_train");
      ntr = n_train != NULL ? (guint) MIN (g_ascii_strtoull (n_train, NULL, 10), (guint64) RPE_EXPLORER_MAX_LENGTH) : 0;
      /* what was measured: the share of its task's tokens predicted right, at its training length
       * and at four times it (no underscore: menu labels take "_" as a mnemonic) */
      label = g_strdup_printf (_("%s: %.0f %% of tokens right at N = %u (trained), %.0f %% at N = %u"),
                               encoding != NULL ? encoding : names[i],
                               a1 != NULL ? 100.0 * g_ascii_strtod (a1, NULL) : 0.0, ntr,
                               a4 != NULL ? 100.0 * g_ascii_strtod (a4, NULL) : 0.0, 4 * ntr);
      item = g_menu_item_new (label, NULL);
      g_menu_item_set_action_and_target (item, "win.open-demo", "s", names[i]);
      g_menu_append_item (self->demos_menu, item);
    }
}

static void
action_tour (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);

  if (self->tour != NULL)
    rpe_tour_bar_start (RPE_TOUR_BAR (self->tour));
}

/* The tour keeps the explorer state itself; the window keeps the rest: the page, the attention
 * zoom, and the checkpoint (source, title) a step's demo replaces. */
static void
tour_started (RpeTourBar *tour,
              RpeWindow  *self)
{
  RpeFigurePage *attention = RPE_FIGURE_PAGE (self->views[RPE_WINDOW_VIEW_ATTENTION]);

  g_free (self->tour_page);
  self->tour_page = g_strdup (adw_view_stack_get_visible_child_name (self->stack));
  self->tour_zoomed = rpe_figure_page_get_zoomed (attention);
  rpe_figure_page_get_viewport (attention, &self->tour_viewport[0], &self->tour_viewport[1],
                                &self->tour_viewport[2], &self->tour_viewport[3]);
  g_free (self->tour_title);
  self->tour_title = g_strdup (gtk_window_get_title (GTK_WINDOW (self)));
  g_free (self->tour_subtitle);
  self->tour_subtitle = g_strdup (adw_view_switcher_title_get_subtitle (self->switcher_title));
  g_free (self->tour_source[0]);
  g_free (self->tour_source[1]);
  self->tour_source[0] = g_strdup (self->source_path);
  self->tour_source[1] = g_strdup (self->source_prefix);
  self->tour_layer = self->source_layer;
  g_strfreev (self->tour_map);
  self->tour_map = g_strdupv (self->source_map);
  g_clear_pointer (&self->tour_checkpoint, rpe_checkpoint_data_unref);
  self->tour_checkpoint = self->checkpoint != NULL ? rpe_checkpoint_data_ref (self->checkpoint) : NULL;
  self->tour_from_demo = self->from_demo;
}

static void
tour_finished (RpeTourBar *tour,
               RpeWindow  *self)
{
  RpeFigurePage *attention = RPE_FIGURE_PAGE (self->views[RPE_WINDOW_VIEW_ATTENTION]);

  _rpe_window_set_source (self, self->tour_source[0], self->tour_source[1], self->tour_layer,
                          (const char *const *) self->tour_map);
  g_clear_pointer (&self->checkpoint, rpe_checkpoint_data_unref);
  self->checkpoint = g_steal_pointer (&self->tour_checkpoint);
  self->from_demo = self->tour_from_demo;
  gtk_window_set_title (GTK_WINDOW (self), self->tour_title);
  adw_view_switcher_title_set_subtitle (self->switcher_title, self->tour_subtitle);
  if (self->tour_page != NULL)
    adw_view_stack_set_visible_child_name (self->stack, self->tour_page);
  /* the restored N reset the viewport: the zoom the person had */
  if (self->tour_zoomed)
    rpe_figure_page_set_viewport (attention, self->tour_viewport[0], self->tour_viewport[1],
                                  self->tour_viewport[2], self->tour_viewport[3]);
  else if (rpe_figure_page_get_zoomed (attention))
    rpe_figure_page_reset_zoom (attention);
}

/* A step's trained demo, opened as any checkpoint is (it is embedded: read at once). */
static gboolean
tour_load_demo (RpeTourBar *tour,
                const char *spec,
                RpeWindow  *self)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeCheckpointData) data = rpe_compute_open_checkpoint (spec, &error);

  if (data == NULL)
    {
      g_autofree char *text = g_strdup_printf (_("The tour could not open %s: %s"), spec, error->message);

      _rpe_window_show_message (self, text);
      return FALSE;
    }
  return _rpe_window_use_checkpoint (self, data, FALSE);
}

/* Scrolls the sidebar so that the tour's target is in view, once it is laid out. */
static gboolean
scroll_to_target (GtkWidget     *widget,
                  GdkFrameClock *clock,
                  gpointer       user_data)
{
  RpeWindow *self = RPE_WINDOW (widget);
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (self->sidebar_scroller);
  graphene_rect_t bounds;

  if (self->scroll_target == NULL
      || !gtk_widget_compute_bounds (self->scroll_target, GTK_WIDGET (self->sidebar), &bounds)
      || gtk_adjustment_get_page_size (adj) <= 0.0)
    return G_SOURCE_CONTINUE;
  {
    double top = bounds.origin.y - 12.0, bottom = bounds.origin.y + bounds.size.height + 12.0;
    double value = gtk_adjustment_get_value (adj), page = gtk_adjustment_get_page_size (adj);

    if (top < value)
      gtk_adjustment_set_value (adj, top);
    else if (bottom > value + page)
      gtk_adjustment_set_value (adj, MIN (top, bottom - page));
  }
  self->scroll_tick = 0;
  g_clear_object (&self->scroll_target);
  return G_SOURCE_REMOVE;
}

/* The sidebar group titled `title`, revealed and scrolled into view. */
static GtkWidget *
tour_show_control (RpeTourBar *tour,
                   const char *title,
                   RpeWindow  *self)
{
  GtkWidget *group = NULL;

  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (self->sidebar)); c != NULL && group == NULL;
       c = gtk_widget_get_next_sibling (c))
    if (ADW_IS_PREFERENCES_GROUP (c)
        && g_strcmp0 (adw_preferences_group_get_title (ADW_PREFERENCES_GROUP (c)), title) == 0)
      group = c;
  if (group == NULL)
    return NULL;
  adw_flap_set_reveal_flap (self->flap, TRUE);
  g_set_object (&self->scroll_target, group);
  if (self->scroll_tick == 0)
    self->scroll_tick = gtk_widget_add_tick_callback (GTK_WIDGET (self), scroll_to_target, NULL, NULL);
  return g_object_ref (group);
}

void
_rpe_window_tour_init (RpeWindow *self)
{
  self->tour = rpe_tour_bar_new (self->state);
  gtk_box_append (self->tour_slot, self->tour);
  g_signal_connect (self->tour, "started", G_CALLBACK (tour_started), self);
  g_signal_connect (self->tour, "finished", G_CALLBACK (tour_finished), self);
  g_signal_connect (self->tour, "load-demo", G_CALLBACK (tour_load_demo), self);
  g_signal_connect (self->tour, "show-control", G_CALLBACK (tour_show_control), self);
}

void
_rpe_window_tour_dispose (RpeWindow *self)
{
  if (self->scroll_tick != 0)
    gtk_widget_remove_tick_callback (GTK_WIDGET (self), self->scroll_tick);
  self->scroll_tick = 0;
  g_clear_object (&self->scroll_target);
  g_clear_pointer (&self->tour_page, g_free);
  g_clear_pointer (&self->tour_title, g_free);
  g_clear_pointer (&self->tour_subtitle, g_free);
  g_clear_pointer (&self->tour_source[0], g_free);
  g_clear_pointer (&self->tour_source[1], g_free);
  g_clear_pointer (&self->tour_map, g_strfreev);
  g_clear_pointer (&self->tour_checkpoint, rpe_checkpoint_data_unref);
}

/* On the first start, an unobtrusive offer of the tour (a toast with a button), once. */
void
_rpe_window_offer_tour (RpeWindow *self)
{
  AdwToast *toast;

  if (self->settings == NULL || g_settings_get_boolean (self->settings, "tour-offered"))
    return;
  g_settings_set_boolean (self->settings, "tour-offered", TRUE);
  toast = adw_toast_new (_("New here? A guided tour shows what SPE, LRPE and FastRPB do"));
  adw_toast_set_button_label (toast, _("Take the _Tour"));
  adw_toast_set_action_name (toast, "win.tour");
  adw_toast_set_timeout (toast, 10);
  rpe_toast_queue_add (self->toasts, toast);
}

/* ------------------------------------------------------------------ misc */

static void
action_view (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  int v = g_variant_get_int32 (parameter);

  if (v >= 1 && v <= RPE_WINDOW_N_VIEWS)
    adw_view_stack_set_visible_child_name (RPE_WINDOW (widget)->stack, view_names[v - 1]);
}

static void
action_toggle_sidebar (GtkWidget  *widget,
                       const char *action_name,
                       GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);

  adw_flap_set_reveal_flap (self->flap, !adw_flap_get_reveal_flap (self->flap));
}

/* Ctrl+L: the next colour scale of the heatmaps (linear, SPE paper, log, power, percentile);
 * Shift+Ctrl+L: one range shared by a view's panels, or each its own. */
static void
action_color_scale (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  guint scale = 0;

  g_object_get (self->state, "color-scale", &scale, NULL);
  g_object_set (self->state, "color-scale", (scale + 1) % RPE_HEATMAP_N_TRANSFORMS, NULL);
}

static void
action_color_range (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  guint range = 0;

  g_object_get (self->state, "color-range", &range, NULL);
  g_object_set (self->state, "color-range", range == RPE_COLOR_RANGE_SHARED ? RPE_COLOR_RANGE_PER_PANEL
                                                                            : RPE_COLOR_RANGE_SHARED, NULL);
}

/* Every descendant of widget measured and drawn again: the plots read the window's
 * .presentation class in measure (the curve views' height) and snapshot (text size). */
static void
relayout_tree (GtkWidget *widget)
{
  gtk_widget_queue_resize (widget);
  gtk_widget_queue_draw (widget);
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    relayout_tree (c);
}

/* F11: presentation (teaching) mode: full screen, large text in the controls and the
 * plots (the .presentation style class; the plots read it), and only the controls of
 * the current view: the sidebar of parameters is hidden (and comes back as it was). */
static void
action_presentation (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);
  gboolean on = !gtk_widget_has_css_class (widget, "presentation");

  if (on)
    {
      g_object_set_data (G_OBJECT (self), "rpe-presentation-flap",
                         GINT_TO_POINTER (adw_flap_get_reveal_flap (self->flap) ? 2 : 1));
      adw_flap_set_reveal_flap (self->flap, FALSE);
      gtk_widget_add_css_class (widget, "presentation");
      /* the whole screen for the figure: no header bar (F11 again brings it back) */
      gtk_widget_set_visible (GTK_WIDGET (self->header_bar), FALSE);
      gtk_window_fullscreen (GTK_WINDOW (self));
      rpe_toast_queue_add (self->toasts, adw_toast_new (_("Presentation mode: F11 to leave")));
    }
  else
    {
      int flap = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (self), "rpe-presentation-flap"));

      gtk_widget_remove_css_class (widget, "presentation");
      gtk_widget_set_visible (GTK_WIDGET (self->header_bar), TRUE);
      gtk_window_unfullscreen (GTK_WINDOW (self));
      if (flap != 0)
        adw_flap_set_reveal_flap (self->flap, flap == 2);
    }
  /* the plots draw their text larger or smaller */
  relayout_tree (widget);
}

static void
action_cancel (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  rpe_window_cancel (RPE_WINDOW (widget));
}

static void
action_dismiss (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  _rpe_window_show_message (RPE_WINDOW (widget), NULL);
}

/* ----------------------------------------------------------------- export */

void
_rpe_window_update_export (RpeWindow *self)
{
  g_autoptr (RpeFigureBundle) bundle = _rpe_window_current_figure (self);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export", bundle != NULL);
}

static void
export_finished (RpeExportDialog *dialog,
                 const char      *path,
                 RpeWindow       *self)
{
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *uri = g_filename_to_uri (dir, NULL, NULL);
  AdwToast *toast = adw_toast_new_format (_("Exported %s"), base);

  /* the next export is offered the same folder */
  if (self->settings != NULL && g_path_is_absolute (dir))
    g_settings_set_string (self->settings, "export-folder", dir);

  if (uri != NULL)
    {
      adw_toast_set_button_label (toast, _("Open _Folder"));
      adw_toast_set_action_name (toast, "win.open-folder");
      adw_toast_set_action_target_value (toast, g_variant_new_string (uri));
    }
  rpe_toast_queue_add (self->toasts, toast);
  gtk_window_destroy (GTK_WINDOW (dialog));
}

/* The Export dialog for page (its figure, its sweep) over the window `over`. */
static void
export_page (RpeWindow     *self,
             RpeFigurePage *page,
             GtkWindow     *over)
{
  g_autoptr (RpeFigureBundle) bundle = page != NULL ? rpe_figure_page_build_figure (page) : NULL;
  const char *dir;
  g_autofree char *path = NULL;
  g_autofree char *last = NULL;

  if (bundle == NULL)
    {
      rpe_toast_queue_add (self->toasts, adw_toast_new (_("Nothing to export yet: the view is still computing.")));
      return;
    }
  if (self->export_dialog != NULL)
    {
      /* the old dialog may be finalized later: its weak pointer must not clear the new one */
      g_object_remove_weak_pointer (G_OBJECT (self->export_dialog), (gpointer *) &self->export_dialog);
      gtk_window_destroy (GTK_WINDOW (self->export_dialog));
    }
  self->export_dialog = rpe_export_dialog_new (over, bundle);
  /* the heatmap views (as `rpe export --sweep`) animate a sweep of R, N or the seed */
  rpe_figure_page_setup_sweep (page, self->export_dialog);
  g_object_add_weak_pointer (G_OBJECT (self->export_dialog), (gpointer *) &self->export_dialog);
  /* the folder of the last export, else Pictures, else home */
  last = self->settings != NULL ? g_settings_get_string (self->settings, "export-folder") : NULL;
  dir = last != NULL && *last != '\0' && g_file_test (last, G_FILE_TEST_IS_DIR) ? last : NULL;
  if (dir == NULL)
    dir = g_get_user_special_dir (G_USER_DIRECTORY_PICTURES);
  if (dir == NULL || !g_file_test (dir, G_FILE_TEST_IS_DIR))
    dir = g_get_home_dir ();
  path = g_build_filename (dir, bundle->default_name != NULL ? bundle->default_name : "figure", NULL);
  rpe_export_dialog_set_path (self->export_dialog, path);
  g_signal_connect_object (self->export_dialog, "exported", G_CALLBACK (export_finished), self, 0);
  gtk_window_present (GTK_WINDOW (self->export_dialog));
}

static void
action_export (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);

  export_page (self, _rpe_window_current_page (self), GTK_WINDOW (self));
}

/* The 2-D convSPE window's figure (its Export button and Ctrl+E ask for it). */
static void
action_export_grid (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  RpeWindow *self = RPE_WINDOW (widget);

  if (self->grid_window != NULL)
    export_page (self, rpe_grid_window_get_page (self->grid_window), GTK_WINDOW (self->grid_window));
}

static void
action_open_folder (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  gtk_show_uri (GTK_WINDOW (widget), g_variant_get_string (parameter, NULL), GDK_CURRENT_TIME);
}

/* The Fit panel (rpe-fit-dialog.c): one per window, kept as object data while it lives. */
static void
fit_dialog_destroyed (GtkWidget *window)
{
  g_object_set_data (G_OBJECT (window), "rpe-fit-dialog", NULL);
}

static void
action_fit (GtkWidget  *widget,
            const char *action_name,
            GVariant   *parameter)
{
  GtkWindow *dialog = g_object_get_data (G_OBJECT (widget), "rpe-fit-dialog");

  if (dialog == NULL)
    {
      dialog = GTK_WINDOW (rpe_fit_dialog_new (GTK_WINDOW (widget), rpe_window_get_state (RPE_WINDOW (widget))));
      g_object_set_data (G_OBJECT (widget), "rpe-fit-dialog", dialog);
      g_signal_connect_object (dialog, "destroy", G_CALLBACK (fit_dialog_destroyed), widget, G_CONNECT_SWAPPED);
    }
  gtk_window_present (dialog);
}

void
_rpe_window_class_actions_init (GtkWidgetClass *widget_class)
{
  gtk_widget_class_install_action (widget_class, "win.fit", NULL, action_fit);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.fit", NULL);
  gtk_widget_class_install_action (widget_class, "win.open", NULL, action_open);
  gtk_widget_class_install_action (widget_class, "win.open-npy", NULL, action_open_npy);
  gtk_widget_class_install_action (widget_class, "win.open-lrpe", NULL, action_open_lrpe);
  gtk_widget_class_install_action (widget_class, "win.grid", NULL, action_grid);
  gtk_widget_class_install_action (widget_class, "win.open-recent", "s", action_open_recent);
  gtk_widget_class_install_action (widget_class, "win.browse-tensors", NULL, action_browse_tensors);
  gtk_widget_class_install_action (widget_class, "win.load-demo", NULL, action_load_demo);
  gtk_widget_class_install_action (widget_class, "win.open-demo", "s", action_open_demo);
  gtk_widget_class_install_action (widget_class, "win.tour", NULL, action_tour);
  gtk_widget_class_install_action (widget_class, "win.export", NULL, action_export);
  gtk_widget_class_install_action (widget_class, "win.export-grid", NULL, action_export_grid);
  gtk_widget_class_install_action (widget_class, "win.open-folder", "s", action_open_folder);
  gtk_widget_class_install_action (widget_class, "win.view", "i", action_view);
  gtk_widget_class_install_action (widget_class, "win.toggle-sidebar", NULL, action_toggle_sidebar);
  gtk_widget_class_install_action (widget_class, "win.cancel", NULL, action_cancel);
  gtk_widget_class_install_action (widget_class, "win.color-scale", NULL, action_color_scale);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_l, GDK_CONTROL_MASK, "win.color-scale", NULL);
  gtk_widget_class_install_action (widget_class, "win.color-range", NULL, action_color_range);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_l, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.color-range", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_L, GDK_CONTROL_MASK | GDK_SHIFT_MASK, "win.color-range", NULL);
  gtk_widget_class_install_action (widget_class, "win.presentation", NULL, action_presentation);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F11, 0, "win.presentation", NULL);
  gtk_widget_class_install_action (widget_class, "win.dismiss-message", NULL, action_dismiss);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK, "win.open", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK, "win.export", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_1, GDK_CONTROL_MASK, "win.view", "i", 1);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_2, GDK_CONTROL_MASK, "win.view", "i", 2);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_3, GDK_CONTROL_MASK, "win.view", "i", 3);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_4, GDK_CONTROL_MASK, "win.view", "i", 4);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_5, GDK_CONTROL_MASK, "win.view", "i", 5);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_F9, 0, "win.toggle-sidebar", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "win.cancel", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK, "window.close", NULL);
}

void
_rpe_window_actions_init (RpeWindow *self)
{
  /* enabled while the current view has a result (_rpe_window_update_export) */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "win.export", FALSE);
}
