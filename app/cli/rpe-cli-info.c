/* rpe-cli-info.c: `rpe info FILE`, the tensors of a checkpoint and the modules recognised. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gi18n.h>

#include "rpe-checkpoint.h"
#include "rpe-checkpoint-lrpe.h"
#include "rpe-demos.h"
#include "rpe-file.h"
#include "rpe-tensor.h"

#include "rpe-cli.h"

#define EXIT_USAGE 2

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* LRPE and FastRPB modules (issue 10), after the SPE ones */
static void
print_lrpe_fastrpb_modules (const RpeTensorSet *set)
{
  g_autoptr (GPtrArray) lrpe = rpe_checkpoint_find_lrpe_modules (set);
  g_autoptr (GPtrArray) fastrpb = rpe_checkpoint_find_fastrpb_modules (set);

  printf ("LRPE modules: %u\n", lrpe->len);
  for (guint i = 0; i < lrpe->len; i++)
    {
      const RpeLrpeModuleInfo *m = g_ptr_array_index (lrpe, i);
      g_autofree char         *theta = m->theta ? rpe_tensor_shape_string (m->theta) : NULL;
      g_autofree char         *perm = m->permutation ? rpe_tensor_shape_string (m->permutation) : NULL;
      g_autofree char         *dim = m->dim ? g_strdup_printf ("%zu", (size_t) m->dim) : g_strdup ("(from theta)");

      printf ("  %-24s D=%s  v: %s  theta: %s  permutation: %s\n", m->prefix, dim,
              m->v ? "Householder (P householder)" : "none", theta ? theta : "none", perm ? perm : "none");
    }
  printf ("FastRPB modules: %u\n", fastrpb->len);
  for (guint i = 0; i < fastrpb->len; i++)
    {
      const RpeFastrpbModuleInfo *m = g_ptr_array_index (fastrpb, i);

      if (m->width % 2 == 0)
        printf ("  %-24s H=%zu  bias.w (1, %zu, %zu): symmetric, M = %zu\n", m->prefix, (size_t) m->n_heads,
                (size_t) m->n_heads, (size_t) m->width, (size_t) m->width);
      else
        printf ("  %-24s H=%zu  bias.w (1, %zu, %zu): full with M = %zu, or symmetric with M = %zu "
                "(--bias-layout)\n",
                m->prefix, (size_t) m->n_heads, (size_t) m->n_heads, (size_t) m->width, (size_t) (m->width + 1) / 2,
                (size_t) m->width);
    }
}

/* Names from a file, escaped for the terminal. */
static char *
info_escape (const char *name)
{
  return rpe_escape_name (name);
}

/* One module and its pairing: the code, and every gate with its layer. */
static void
rpe_cli_print_module (const RpeSpeModuleInfo *m)
{
  g_autofree char *prefix = info_escape (m->prefix);
  g_autofree char *code = info_escape (m->code_name);
  GString         *size = g_string_new (NULL);

  if (m->method == RPE_SPE_SINE)
    g_string_printf (size, "K=%zu", (size_t) m->size);
  else if (m->size2 > 0)
    g_string_printf (size, "L=%zux%zu (2-D)", (size_t) m->size, (size_t) m->size2);
  else
    g_string_printf (size, "L=%zu", (size_t) m->size);
  printf ("  %-24s %s  H=%zu D=%zu %s  (%s)\n", prefix[0] != '\0' ? prefix : "''",
          m->method == RPE_SPE_SINE ? "sine" : "conv", (size_t) m->n_heads, (size_t) m->n_features, size->str,
          m->convention);
  g_string_free (size, TRUE);
  if (m->layers->len > 0 && g_str_has_suffix (m->convention, "-unshared"))
    {
      GString *layers = g_string_new (NULL);
      for (guint j = 0; j < m->layers->len; j++)
        g_string_append_printf (layers, "%s%d", j ? ", " : "", g_array_index (m->layers, int, j));
      printf ("      code: %s  (one per layer: %s)\n", code, layers->str);
      g_string_free (layers, TRUE);
    }
  else
    printf ("      code: %s\n", code);
  if (m->gates->len == 0)
    printf ("      gates: none\n");
  for (guint j = 0; j < m->gates->len; j++)
    {
      g_autofree char *gate = info_escape (g_ptr_array_index (m->gates, j));
      int              layer = g_array_index (m->gate_layers, int, j);

      if (layer >= 0)
        printf ("      gate of layer %d: %s\n", layer, gate);
      else
        printf ("      gate shared by all layers: %s\n", gate);
    }
  if (m->pairing_note != NULL)
    {
      g_autofree char *n = info_escape (m->pairing_note);
      printf ("      ambiguous: %s (choose with --map gate=TENSOR)\n", n);
    }
}

int
rpe_cli_info (int argc, char **argv)
{
  int status;
  g_autoptr (GError) error = NULL;
  g_autoptr (RpeTensorSet) set = NULL;
  g_autoptr (GPtrArray) modules = NULL;
  g_autoptr (GPtrArray) unpaired = NULL;

  if (!rpe_cli_parse (&rpe_cli_info_command, &rpe_cli_info_command.leaves[0], NULL, NULL, NULL, &argc, &argv, &status))
    {
      if (status == 0)
        {
          g_auto (GStrv) demos = rpe_demos_list ();
          g_autofree char *names = g_strjoinv (", ", demos);

          printf (_("\nThe trained demos (demo:NAME): %s\n"), names);
        }
      return status;
    }
  if (argc != 2)
    {
      fprintf (stderr, _("rpe info: usage: rpe info FILE\n"));
      return EXIT_USAGE;
    }
  set = rpe_cli_read_checkpoint (argv[1], &error);
  if (set == NULL)
    {
      fprintf (stderr, _("rpe info: %s\n"), error->message);
      return rpe_cli_exit_code_for_error (error);
    }
  {
    g_autofree char *shown = rpe_escape_name (argv[1]);

    printf ("%s: %zu tensors\n", shown, (size_t) rpe_tensor_set_size (set));
  }
  if (rpe_demos_is_spec (argv[1]) && !g_file_test (argv[1], G_FILE_TEST_EXISTS))
    {
      g_autoptr (GHashTable) meta = rpe_demos_metadata (argv[1], NULL);
      g_autofree gpointer *keys = meta != NULL ? g_hash_table_get_keys_as_array (meta, NULL) : NULL;
      guint                n_keys = meta != NULL ? g_hash_table_size (meta) : 0;

      if (n_keys > 0)
        {
          qsort (keys, n_keys, sizeof (gpointer), compare_strings);
          printf ("metadata:\n");
          for (guint i = 0; i < n_keys; i++)
            printf ("  %-24s %s\n", (const char *) keys[i], (const char *) g_hash_table_lookup (meta, keys[i]));
        }
    }
  /* names come from the file: escaped (control characters, invalid UTF-8) */
  for (gsize i = 0; i < rpe_tensor_set_size (set); i++)
    {
      const RpeTensor *t = rpe_tensor_set_get (set, i);
      g_autofree char *shape = rpe_tensor_shape_string (t);
      g_autofree char *shown = rpe_escape_name (t->name);

      printf ("  %-48s %-4s %s\n", shown, rpe_dtype_to_string (t->dtype), shape);
    }
  modules = rpe_checkpoint_discover (set, &unpaired, &error);
  if (modules == NULL)
    {
      fprintf (stderr, _("rpe info: %s\n"), error->message);
      return rpe_cli_exit_code_for_error (error);
    }
  printf ("SPE modules: %u\n", modules->len);
  for (guint i = 0; i < modules->len; i++)
    rpe_cli_print_module (g_ptr_array_index (modules, i));
  if (unpaired->len > 0)
    {
      printf ("Gates paired with no module (use one with --map gate=TENSOR):\n");
      for (guint i = 0; i < unpaired->len; i++)
        {
          g_autofree char *name = info_escape (g_ptr_array_index (unpaired, i));
          printf ("  %s\n", name);
        }
    }
  print_lrpe_fastrpb_modules (set);
  return 0;
}

static const RpeCliLeaf info_leaves[] = {
  { NULL, N_("List a checkpoint's tensors and the modules recognised in it"),
    N_("Lists the tensors of a checkpoint (name, dtype, shape), then the SPE modules recognised (their\n"
       "prefix, method, sizes and convention, with the code and the gate of every layer), the gates\n"
       "paired with no module, and the LRPE and FastRPB modules.  FILE is .safetensors, .pt, .npz or\n"
       ".npy; 'demo' is the embedded demo checkpoint and 'demo:NAME' a trained demo (listed below),\n"
       "with its metadata.  Names from the file are shown escaped."),
    "info demo:sine-spe", 0, 0, NULL, NULL, NULL, NULL },
};

const RpeCliCommand rpe_cli_info_command = {
  .name = "info",
  .summary = N_("List a checkpoint's tensors and the modules recognised in it"),
  .args = "FILE",
  .leaves = info_leaves,
  .n_leaves = G_N_ELEMENTS (info_leaves),
  .run = rpe_cli_info,
};
