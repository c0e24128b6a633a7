#include "config.h"

#include <string.h>

#include "rpe-error.h"
#include "rpe-tensor-map.h"

struct _RpeTensorMap
{
  char *names[RPE_N_ROLES];
};

static const char *const role_names[RPE_N_ROLES] = {
  "freqs", "offsets", "gains", "conv_q", "conv_k", "gate",
  "lrpe.v", "lrpe.theta", "lrpe.permutation", "fastrpb.w",
};

static const struct { const char *alias; RpeRole role; } role_aliases[] = {
  { "sine.freqs", RPE_ROLE_SINE_FREQS },
  { "sine.offsets", RPE_ROLE_SINE_OFFSETS },
  { "sine.gains", RPE_ROLE_SINE_GAINS },
  { "conv.q", RPE_ROLE_CONV_Q },
  { "conv.k", RPE_ROLE_CONV_K },
  { "v", RPE_ROLE_LRPE_V },
  { "theta", RPE_ROLE_LRPE_THETA },
  { "permutation", RPE_ROLE_LRPE_PERMUTATION },
  { "w", RPE_ROLE_FASTRPB_W },
};

const char *
rpe_role_to_string (RpeRole role)
{
  return (unsigned) role < RPE_N_ROLES ? role_names[role] : "?";
}

gboolean
rpe_role_from_string (const char *text,
                      RpeRole    *role)
{
  if (text == NULL)
    return FALSE;
  for (int r = 0; r < RPE_N_ROLES; r++)
    if (g_ascii_strcasecmp (text, role_names[r]) == 0)
      {
        *role = (RpeRole) r;
        return TRUE;
      }
  for (gsize i = 0; i < G_N_ELEMENTS (role_aliases); i++)
    if (g_ascii_strcasecmp (text, role_aliases[i].alias) == 0)
      {
        *role = role_aliases[i].role;
        return TRUE;
      }
  return FALSE;
}

char *
rpe_role_list (void)
{
  GString *s = g_string_new (NULL);

  for (int r = 0; r < RPE_N_ROLES; r++)
    g_string_append_printf (s, "%s%s", r > 0 ? ", " : "", role_names[r]);
  return g_string_free (s, FALSE);
}

RpeTensorMap *
rpe_tensor_map_new (void)
{
  return g_new0 (RpeTensorMap, 1);
}

RpeTensorMap *
rpe_tensor_map_copy (const RpeTensorMap *map)
{
  RpeTensorMap *copy;

  if (map == NULL)
    return NULL;
  copy = rpe_tensor_map_new ();
  for (int r = 0; r < RPE_N_ROLES; r++)
    copy->names[r] = g_strdup (map->names[r]);
  return copy;
}

void
rpe_tensor_map_free (RpeTensorMap *map)
{
  if (map == NULL)
    return;
  for (int r = 0; r < RPE_N_ROLES; r++)
    g_free (map->names[r]);
  g_free (map);
}

void
rpe_tensor_map_set (RpeTensorMap *map,
                    RpeRole       role,
                    const char   *name)
{
  g_return_if_fail (map != NULL && (unsigned) role < RPE_N_ROLES);

  if (name != NULL)
    for (int r = 0; r < RPE_N_ROLES; r++)
      if (map->names[r] != NULL && strcmp (map->names[r], name) == 0)
        g_clear_pointer (&map->names[r], g_free);
  g_free (map->names[role]);
  map->names[role] = g_strdup (name);
}

gboolean
rpe_tensor_map_parse (RpeTensorMap *map,
                      const char   *assignment,
                      GError      **error)
{
  const char *eq = strchr (assignment, '=');
  g_autofree char *role_text = NULL;
  g_autofree char *roles = NULL;
  RpeRole role;

  if (eq == NULL || eq == assignment || eq[1] == '\0')
    {
      roles = rpe_role_list ();
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            "A role assignment is ROLE=TENSOR (roles: %s), not '%s'", roles, assignment);
    }
  role_text = g_strndup (assignment, (gsize) (eq - assignment));
  if (!rpe_role_from_string (role_text, &role))
    {
      roles = rpe_role_list ();
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            "Unknown role '%s' in '%s' (roles: %s)", role_text, assignment, roles);
    }
  if (map->names[role] != NULL)
    return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                          "The role '%s' is mapped twice ('%s' and '%s')",
                          role_names[role], map->names[role], eq + 1);
  for (int r = 0; r < RPE_N_ROLES; r++)
    if (map->names[r] != NULL && strcmp (map->names[r], eq + 1) == 0)
      return rpe_set_error (error, RPE_ERROR_INVALID_ARGUMENT,
                            "The tensor '%s' is mapped to two roles ('%s' and '%s')",
                            eq + 1, role_names[r], role_names[role]);
  map->names[role] = g_strdup (eq + 1);
  return TRUE;
}

const char *
rpe_tensor_map_get (const RpeTensorMap *map,
                    RpeRole             role)
{
  if (map == NULL || (unsigned) role >= RPE_N_ROLES)
    return NULL;
  return map->names[role];
}

gboolean
rpe_tensor_map_role_of (const RpeTensorMap *map,
                        const char         *name,
                        RpeRole            *role)
{
  if (map == NULL || name == NULL)
    return FALSE;
  for (int r = 0; r < RPE_N_ROLES; r++)
    if (map->names[r] != NULL && strcmp (map->names[r], name) == 0)
      {
        if (role != NULL)
          *role = (RpeRole) r;
        return TRUE;
      }
  return FALSE;
}

gboolean
rpe_tensor_map_has_any (const RpeTensorMap *map,
                        RpeRole             first,
                        RpeRole             last)
{
  if (map == NULL)
    return FALSE;
  for (int r = first; r <= (int) last && r < RPE_N_ROLES; r++)
    if (map->names[r] != NULL)
      return TRUE;
  return FALSE;
}

gboolean
rpe_tensor_map_is_empty (const RpeTensorMap *map)
{
  return !rpe_tensor_map_has_any (map, 0, RPE_N_ROLES - 1);
}

char *
rpe_tensor_map_to_string (const RpeTensorMap *map)
{
  GString *s = g_string_new (NULL);

  if (map != NULL)
    for (int r = 0; r < RPE_N_ROLES; r++)
      if (map->names[r] != NULL)
        g_string_append_printf (s, "%s%s=%s", s->len > 0 ? ", " : "", role_names[r], map->names[r]);
  return g_string_free (s, FALSE);
}
