/* rpe-tensor-browser.c: the tensor browser dialog of an opened checkpoint. */
#include "config.h"

#include <glib/gi18n.h>

#include "rpe-tensor-browser.h"
#include "rpe-checkpoint-lrpe.h"

#include "rpe-file.h"

struct _RpeTensorBrowser
{
  AdwWindow          parent_instance;

  RpeCheckpointData *data;
  GtkListBox        *tensors;
  GtkDropDown       *module_dropdown;
  GtkDropDown       *layer_dropdown;
  GtkLabel          *module_label;
  GtkDropDown       *shape_dropdown;   /* "as read", then H x D for every divisor H of H*D */
  GArray            *shape_heads;      /* gsize: the H of each entry (0: as read) */
  guint              n_rows;
  GPtrArray         *role_pickers;     /* GtkDropDown*, one per tensor row */
  RpeTensorMap      *map;
  gboolean           syncing;
};

G_DEFINE_FINAL_TYPE (RpeTensorBrowser, rpe_tensor_browser, ADW_TYPE_WINDOW)

enum {
  SIGNAL_MODULE_CHOSEN,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static const RpeSpeModuleInfo *
module_at (RpeTensorBrowser *self,
           guint             i)
{
  if (self->data == NULL || self->data->modules == NULL || i >= self->data->modules->len)
    return NULL;
  return g_ptr_array_index (self->data->modules, i);
}

static void
update_layers (RpeTensorBrowser *self)
{
  const RpeSpeModuleInfo *info = module_at (self, gtk_drop_down_get_selected (self->module_dropdown));
  GtkStringList *layers = gtk_string_list_new (NULL);
  g_autofree char *text = NULL;

  gtk_string_list_append (layers, _("default"));
  if (info != NULL && info->layers != NULL)
    for (guint i = 0; i < info->layers->len; i++)
      {
        g_autofree char *name = g_strdup_printf (_("layer %d"), g_array_index (info->layers, int, i));

        gtk_string_list_append (layers, name);
      }
  gtk_drop_down_set_model (self->layer_dropdown, G_LIST_MODEL (layers));
  g_object_unref (layers);
  gtk_widget_set_sensitive (GTK_WIDGET (self->layer_dropdown),
                            info != NULL && info->layers != NULL && info->layers->len > 0);
  if (info != NULL)
    {
      GString *s = g_string_new (NULL);
      g_autofree char *prefix = rpe_escape_name (info->prefix);
      g_autofree char *code = rpe_escape_name (info->code_name);

      g_string_printf (s, _("%s SPE “%s”: H = %zu heads, D = %zu features, %s = %zu, %s naming.\nCode: %s"),
                       info->method == RPE_SPE_SINE ? _("Sine") : _("Conv"), prefix, info->n_heads,
                       info->n_features, info->method == RPE_SPE_SINE ? "K" : "L", info->size,
                       info->convention, code);
      if (info->gates->len == 0)
        g_string_append (s, _("\nNo gate."));
      for (guint i = 0; i < info->gates->len; i++)
        {
          g_autofree char *gate = rpe_escape_name (g_ptr_array_index (info->gates, i));
          int layer = g_array_index (info->gate_layers, int, i);

          if (layer >= 0)
            g_string_append_printf (s, _("\nGate of layer %d: %s"), layer, gate);
          else
            g_string_append_printf (s, _("\nGate shared by all layers: %s"), gate);
        }
      if (info->pairing_note != NULL)
        {
          g_autofree char *note = rpe_escape_name (info->pairing_note);
          g_string_append_printf (s, _("\nAmbiguous: %s. Assign the gate role to one of them in the list above."), note);
        }
      text = g_string_free (s, FALSE);
    }
  if (text == NULL)
    {
      GString *s = g_string_new (_("No SPE module was recognised."));
      GPtrArray *lrpe = self->data->lrpe_modules, *fastrpb = self->data->fastrpb_modules;

      for (guint i = 0; lrpe != NULL && i < lrpe->len; i++)
        {
          const RpeLrpeModuleInfo *m = g_ptr_array_index (lrpe, i);
          g_autofree char *name = rpe_escape_name (m->prefix);

          g_string_append_printf (s, i == 0 ? _("\nLRPE modules (the sidebar's LRPE Parameters): %s") : ", %s", name);
        }
      for (guint i = 0; fastrpb != NULL && i < fastrpb->len; i++)
        {
          const RpeFastrpbModuleInfo *m = g_ptr_array_index (fastrpb, i);
          g_autofree char *name = rpe_escape_name (m->prefix);

          g_string_append_printf (s, i == 0 ? _("\nFastRPB biases: %s") : ", %s", name);
        }
      g_string_append (s, _("\nAssign roles to the tensors in the list above (SPE, lrpe.v/theta/permutation, fastrpb.w)."));
      text = g_string_free (s, FALSE);
    }
  gtk_label_set_text (self->module_label, text);
}

/* The choices of H x D for the module: a file that stores the channels of all heads in one
 * axis (a conv weight (256, 1, L)) cannot say how many heads there are. */
static void
update_shapes (RpeTensorBrowser *self)
{
  const RpeSpeModuleInfo *info = module_at (self, gtk_drop_down_get_selected (self->module_dropdown));
  GtkStringList *list = gtk_string_list_new (NULL);
  gsize zero = 0;

  g_array_set_size (self->shape_heads, 0);
  g_array_append_val (self->shape_heads, zero);
  if (info != NULL)
    {
      gsize channels = info->n_heads * info->n_features;
      g_autofree char *first = g_strdup_printf (_("As read: H = %zu × D = %zu"), info->n_heads, info->n_features);

      gtk_string_list_append (list, first);
      for (gsize h = 1; h <= channels && channels <= (gsize) 1 << 20; h++)
        if (channels % h == 0 && h != info->n_heads)
          {
            g_autofree char *text = g_strdup_printf ("H = %zu × D = %zu", h, channels / h);

            gtk_string_list_append (list, text);
            g_array_append_val (self->shape_heads, h);
          }
    }
  else
    gtk_string_list_append (list, _("As read"));
  gtk_drop_down_set_model (self->shape_dropdown, G_LIST_MODEL (list));
  g_object_unref (list);
  gtk_drop_down_set_selected (self->shape_dropdown, 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->shape_dropdown), self->shape_heads->len > 1);
}

static void
module_changed (GtkDropDown      *dropdown,
                GParamSpec       *pspec,
                RpeTensorBrowser *self)
{
  update_layers (self);
  update_shapes (self);
}

static void
use_clicked (GtkButton        *button,
             RpeTensorBrowser *self)
{
  guint module = gtk_drop_down_get_selected (self->module_dropdown);
  guint layer_index = gtk_drop_down_get_selected (self->layer_dropdown);
  const RpeSpeModuleInfo *info = module_at (self, module);
  int layer = -1;

  if (info == NULL && rpe_tensor_map_is_empty (self->map))
    return;
  if (info != NULL && layer_index > 0 && info->layers != NULL && layer_index - 1 < info->layers->len)
    layer = g_array_index (info->layers, int, layer_index - 1);
  rpe_tensor_browser_choose (self, module, layer);
}

/* ---- roles ---- */

static void
sync_role_pickers (RpeTensorBrowser *self)
{
  self->syncing = TRUE;
  for (guint i = 0; i < self->role_pickers->len; i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (self->data->set, i);
      RpeRole role;
      guint selected = rpe_tensor_map_role_of (self->map, t->name, &role) ? (guint) role + 1 : 0;

      gtk_drop_down_set_selected (g_ptr_array_index (self->role_pickers, i), selected);
    }
  self->syncing = FALSE;
}

static void
role_picked (GtkDropDown      *dropdown,
             GParamSpec       *pspec,
             RpeTensorBrowser *self)
{
  guint row = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (dropdown), "rpe-row"));
  guint selected = gtk_drop_down_get_selected (dropdown);
  const RpeTensor *t;
  RpeRole old;

  if (self->syncing || self->data == NULL || (t = rpe_tensor_set_get (self->data->set, row)) == NULL)
    return;
  if (rpe_tensor_map_role_of (self->map, t->name, &old))
    rpe_tensor_map_set (self->map, old, NULL);
  if (selected > 0 && selected != GTK_INVALID_LIST_POSITION)
    rpe_tensor_map_set (self->map, (RpeRole) (selected - 1), t->name);
  /* one tensor per role: the picker of the tensor it replaced goes back to none */
  sync_role_pickers (self);
}

static GtkWidget *
role_picker_new (RpeTensorBrowser *self,
                 guint             row)
{
  GtkStringList *roles = gtk_string_list_new (NULL);
  GtkWidget *dropdown;

  gtk_string_list_append (roles, _("no role"));
  for (int r = 0; r < RPE_N_ROLES; r++)
    gtk_string_list_append (roles, rpe_role_to_string ((RpeRole) r));
  dropdown = gtk_drop_down_new (G_LIST_MODEL (roles), NULL);
  gtk_widget_set_valign (dropdown, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (dropdown, _("Use this tensor as a parameter (as --map ROLE=TENSOR does)"));
  g_object_set_data (G_OBJECT (dropdown), "rpe-row", GUINT_TO_POINTER (row));
  g_signal_connect (dropdown, "notify::selected", G_CALLBACK (role_picked), self);
  g_ptr_array_add (self->role_pickers, dropdown);
  return dropdown;
}

static void
rpe_tensor_browser_dispose (GObject *object)
{
  RpeTensorBrowser *self = RPE_TENSOR_BROWSER (object);

  g_clear_pointer (&self->data, rpe_checkpoint_data_unref);
  g_clear_pointer (&self->role_pickers, g_ptr_array_unref);
  g_clear_pointer (&self->map, rpe_tensor_map_free);
  g_clear_pointer (&self->shape_heads, g_array_unref);
  G_OBJECT_CLASS (rpe_tensor_browser_parent_class)->dispose (object);
}

static void
rpe_tensor_browser_class_init (RpeTensorBrowserClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = rpe_tensor_browser_dispose;
  signals[SIGNAL_MODULE_CHOSEN] =
    g_signal_new ("module-chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_INT);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
rpe_tensor_browser_init (RpeTensorBrowser *self)
{
  GtkWidget *box, *header, *scrolled, *pickers, *button, *label;

  self->map = rpe_tensor_map_new ();
  self->role_pickers = g_ptr_array_new ();
  self->shape_heads = g_array_new (FALSE, TRUE, sizeof (gsize));
  gtk_window_set_default_size (GTK_WINDOW (self), 720, 560);
  gtk_window_set_modal (GTK_WINDOW (self), TRUE);
  gtk_window_set_title (GTK_WINDOW (self), _("Checkpoint Contents"));
  box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  header = adw_header_bar_new ();
  gtk_box_append (GTK_BOX (box), header);

  label = gtk_label_new (_("Tensors"));
  gtk_widget_add_css_class (label, "heading");
  gtk_label_set_xalign (GTK_LABEL (label), 0.0f);
  gtk_widget_set_margin_start (label, 12);
  gtk_widget_set_margin_top (label, 12);
  gtk_box_append (GTK_BOX (box), label);
  scrolled = gtk_scrolled_window_new ();
  gtk_widget_set_vexpand (scrolled, TRUE);
  gtk_widget_set_margin_start (scrolled, 12);
  gtk_widget_set_margin_end (scrolled, 12);
  gtk_widget_set_margin_top (scrolled, 6);
  self->tensors = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_list_box_set_selection_mode (self->tensors, GTK_SELECTION_NONE);
  gtk_widget_add_css_class (GTK_WIDGET (self->tensors), "boxed-list");
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scrolled), GTK_WIDGET (self->tensors));
  gtk_box_append (GTK_BOX (box), scrolled);

  self->module_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->module_label, TRUE);
  gtk_label_set_xalign (self->module_label, 0.0f);
  gtk_widget_set_margin_start (GTK_WIDGET (self->module_label), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self->module_label), 12);
  gtk_widget_set_margin_top (GTK_WIDGET (self->module_label), 12);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->module_label));

  pickers = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_set_margin_start (pickers, 12);
  gtk_widget_set_margin_end (pickers, 12);
  gtk_widget_set_margin_top (pickers, 8);
  gtk_widget_set_margin_bottom (pickers, 12);
  gtk_box_append (GTK_BOX (pickers), gtk_label_new (_("Module")));
  self->module_dropdown = GTK_DROP_DOWN (gtk_drop_down_new (NULL, NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->module_dropdown), _("The SPE module to explore"));
  g_signal_connect (self->module_dropdown, "notify::selected", G_CALLBACK (module_changed), self);
  gtk_box_append (GTK_BOX (pickers), GTK_WIDGET (self->module_dropdown));
  gtk_box_append (GTK_BOX (pickers), gtk_label_new (_("Layer")));
  self->layer_dropdown = GTK_DROP_DOWN (gtk_drop_down_new (NULL, NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->layer_dropdown),
                               _("Which layer: its gate, or its code and gate in an unshared model"));
  gtk_box_append (GTK_BOX (pickers), GTK_WIDGET (self->layer_dropdown));
  gtk_box_append (GTK_BOX (pickers), gtk_label_new (_("Shape")));
  self->shape_dropdown = GTK_DROP_DOWN (gtk_drop_down_new (NULL, NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->shape_dropdown),
                               _("Heads × features: a file that keeps every channel in one axis (a conv weight "
                                 "(256, 1, L)) is read as H = 1; state how its H·D channels split into heads"));
  gtk_box_append (GTK_BOX (pickers), GTK_WIDGET (self->shape_dropdown));
  button = gtk_button_new_with_mnemonic (_("_Use Module"));
  gtk_widget_add_css_class (button, "suggested-action");
  gtk_widget_set_hexpand (button, TRUE);
  gtk_widget_set_halign (button, GTK_ALIGN_END);
  gtk_widget_set_tooltip_text (button, _("Explore this module and gate"));
  g_signal_connect (button, "clicked", G_CALLBACK (use_clicked), self);
  gtk_box_append (GTK_BOX (pickers), button);
  gtk_box_append (GTK_BOX (box), pickers);
  adw_window_set_content (ADW_WINDOW (self), box);
}

RpeTensorBrowser *
rpe_tensor_browser_new (GtkWindow         *parent,
                        RpeCheckpointData *data)
{
  RpeTensorBrowser *self = g_object_new (RPE_TYPE_TENSOR_BROWSER, "transient-for", parent, NULL);
  GtkStringList *modules = gtk_string_list_new (NULL);
  g_autofree char *base = g_path_get_basename (data->path);
  g_autofree char *shown_base = rpe_escape_name (base);
  g_autofree char *title = g_strdup_printf (_("Contents of %s"), shown_base);

  self->data = rpe_checkpoint_data_ref (data);
  gtk_window_set_title (GTK_WINDOW (self), title);
  for (gsize i = 0; i < rpe_tensor_set_size (data->set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (data->set, i);
      g_autofree char *shape = rpe_tensor_shape_string (t);
      GtkWidget *row = adw_action_row_new ();

      g_autofree char *row_title = rpe_escape_name (t->name);

      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), row_title[0] != '\0' ? row_title : _("(unnamed array)"));
      adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row), rpe_dtype_to_string (t->dtype));
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_label_new (shape));
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), role_picker_new (self, i));
      gtk_list_box_append (self->tensors, row);
      self->n_rows++;
    }
  for (guint i = 0; data->modules != NULL && i < data->modules->len; i++)
    {
      const RpeSpeModuleInfo *info = g_ptr_array_index (data->modules, i);
      g_autofree char *shown = rpe_escape_name (info->prefix);
      g_autofree char *name = g_strdup_printf ("%s (%s)", shown,
                                               info->method == RPE_SPE_SINE ? "sine" : "conv");

      gtk_string_list_append (modules, name);
    }
  gtk_drop_down_set_model (self->module_dropdown, G_LIST_MODEL (modules));
  g_object_unref (modules);
  update_layers (self);
  update_shapes (self);
  return self;
}

gsize
rpe_tensor_browser_get_heads (RpeTensorBrowser *self)
{
  guint i;

  g_return_val_if_fail (RPE_IS_TENSOR_BROWSER (self), 0);
  i = gtk_drop_down_get_selected (self->shape_dropdown);
  return i < self->shape_heads->len ? g_array_index (self->shape_heads, gsize, i) : 0;
}

gboolean
rpe_tensor_browser_set_heads (RpeTensorBrowser *self,
                              gsize             heads)
{
  g_return_val_if_fail (RPE_IS_TENSOR_BROWSER (self), FALSE);
  for (guint i = 0; i < self->shape_heads->len; i++)
    if (g_array_index (self->shape_heads, gsize, i) == heads)
      {
        gtk_drop_down_set_selected (self->shape_dropdown, i);
        return TRUE;
      }
  return FALSE;
}

RpeCheckpointData *
rpe_tensor_browser_get_data (RpeTensorBrowser *self)
{
  g_return_val_if_fail (RPE_IS_TENSOR_BROWSER (self), NULL);
  return self->data;
}

guint
rpe_tensor_browser_get_n_rows (RpeTensorBrowser *self)
{
  g_return_val_if_fail (RPE_IS_TENSOR_BROWSER (self), 0);
  return self->n_rows;
}

void
rpe_tensor_browser_choose (RpeTensorBrowser *self,
                           guint             module,
                           int               layer)
{
  const RpeSpeModuleInfo *info;

  g_return_if_fail (RPE_IS_TENSOR_BROWSER (self));
  info = module_at (self, module);
  if (info == NULL && rpe_tensor_map_is_empty (self->map))
    return;
  g_signal_emit (self, signals[SIGNAL_MODULE_CHOSEN], 0, info != NULL ? info->prefix : NULL, layer);
  gtk_window_close (GTK_WINDOW (self));
}

const RpeTensorMap *
rpe_tensor_browser_get_map (RpeTensorBrowser *self)
{
  g_return_val_if_fail (RPE_IS_TENSOR_BROWSER (self), NULL);
  return self->map;
}

gboolean
rpe_tensor_browser_assign (RpeTensorBrowser *self,
                           const char       *name,
                           int               role)
{
  g_return_val_if_fail (RPE_IS_TENSOR_BROWSER (self), FALSE);
  g_return_val_if_fail (role >= -1 && role < RPE_N_ROLES, FALSE);

  for (guint i = 0; i < self->role_pickers->len; i++)
    if (g_strcmp0 (rpe_tensor_set_get (self->data->set, i)->name, name) == 0)
      {
        gtk_drop_down_set_selected (g_ptr_array_index (self->role_pickers, i), (guint) (role + 1));
        return TRUE;
      }
  return FALSE;
}

const char *
rpe_tensor_browser_get_row_role (RpeTensorBrowser *self,
                                 guint             row)
{
  GtkDropDown *dropdown;
  guint selected;

  g_return_val_if_fail (RPE_IS_TENSOR_BROWSER (self), NULL);
  if (row >= self->role_pickers->len)
    return NULL;
  dropdown = g_ptr_array_index (self->role_pickers, row);
  selected = gtk_drop_down_get_selected (dropdown);
  return selected > 0 && selected != GTK_INVALID_LIST_POSITION ? rpe_role_to_string ((RpeRole) (selected - 1)) : "";
}
