#include "config.h"

#include <string.h>

#include "rpe-alloc.h"
#include "rpe-error.h"
#include "rpe-pickle.h"

/* The pickle format is documented in CPython's Lib/pickletools.py.  torch.save
 * (torch/serialization.py, _save) pickles the state_dict with protocol 2 and
 * replaces each storage by a persistent id
 *   ('storage', torch.FloatStorage, '<key>', '<location>', <numel>)
 * and each tensor by a REDUCE of
 *   torch._utils._rebuild_tensor_v2 (storage, storage_offset, size, stride,
 *                                     requires_grad, backward_hooks[, metadata])
 * An OrderedDict is a REDUCE of collections.OrderedDict with (), filled by
 * SETITEMS and given its _metadata attribute by BUILD.
 *
 * The machine below implements just that.  Values live in an arena freed at
 * the end (the memo may share them, and a malicious pickle may build cycles). */

typedef enum
{
  O_NONE,
  O_BOOL,
  O_INT,
  O_FLOAT,
  O_STR,
  O_TUPLE,
  O_LIST,
  O_DICT,       /* items: key, value, key, value, ... */
  O_GLOBAL,
  O_STORAGE,
  O_TENSOR,
} ObjKind;

typedef enum
{
  G_ORDERED_DICT,
  G_REBUILD_TENSOR_V2,
  G_REBUILD_PARAMETER,
  G_STORAGE_TYPE,
} GlobalKind;

typedef struct
{
  gsize offset;
  gsize ndim;
  gsize shape[RPE_TENSOR_MAX_DIMS];
  gsize stride[RPE_TENSOR_MAX_DIMS];
} TensorInfo;

typedef struct _Obj Obj;
struct _Obj
{
  ObjKind     kind;
  GlobalKind  global;     /* O_GLOBAL */
  gboolean    float_ok;   /* O_GLOBAL storage types and O_STORAGE: a dtype we read */
  RpeDType    dtype;
  gint64      i;          /* O_BOOL, O_INT; O_STORAGE: numel */
  char       *s;          /* O_STR; O_STORAGE: key; O_GLOBAL: "module.name" */
  GPtrArray  *items;      /* O_TUPLE, O_LIST, O_DICT */
  Obj        *storage;    /* O_TENSOR */
  TensorInfo *tensor;     /* O_TENSOR */
};

typedef struct
{
  const guint8 *data;
  gsize         length;
  gsize         pos;
  gsize         op_pos;      /* offset of the current opcode, for errors */
  const char   *name;
  GError      **error;
  GPtrArray    *arena;
  GPtrArray    *stack;
  GArray       *marks;       /* gsize: stack lengths at MARK */
  GHashTable   *memo;        /* index -> Obj* */
  gsize         visits;      /* flatten's work, bounded: shared sub-dicts could
                              * otherwise make it exponential ("billion laughs") */
} Machine;

static void
obj_free (gpointer p)
{
  Obj *o = p;

  g_free (o->s);
  if (o->items != NULL)
    g_ptr_array_unref (o->items);
  g_free (o->tensor);
  g_free (o);
}

/* Pickle opcode names (pickletools), for errors. */
static const char *
opcode_name (guint8 op)
{
  switch (op)
    {
    case '(': return "MARK";
    case '.': return "STOP";
    case '0': return "POP";
    case '2': return "DUP";
    case '1': return "POP_MARK";
    case 'F': return "FLOAT";
    case 'I': return "INT";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'L': return "LONG";
    case 'M': return "BININT2";
    case 'N': return "NONE";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'X': return "BINUNICODE";
    case 'a': return "APPEND";
    case 'b': return "BUILD";
    case 'c': return "GLOBAL";
    case 'd': return "DICT";
    case '}': return "EMPTY_DICT";
    case 'e': return "APPENDS";
    case 'g': return "GET";
    case 'h': return "BINGET";
    case 'i': return "INST";
    case 'j': return "LONG_BINGET";
    case 'l': return "LIST";
    case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";
    case 'p': return "PUT";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";
    case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";
    case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return NULL;
    }
}

static gboolean
bad (Machine    *m,
     const char *what)
{
  return rpe_set_error (m->error, RPE_ERROR_FORMAT,
                        "'%s': malformed pickle at byte %" G_GSIZE_FORMAT ": %s", m->name, m->op_pos, what);
}

static Obj *
new_obj (Machine *m,
         ObjKind  kind)
{
  RpeStatus st = RPE_OK;
  Obj *o;

  if (m->arena->len >= RPE_PICKLE_MAX_OBJECTS)
    {
      rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                     "'%s': the pickle creates more than %u values", m->name, RPE_PICKLE_MAX_OBJECTS);
      return NULL;
    }
  /* the values' memory, against the budget as it grows */
  if (m->arena->len % 4096 == 0
      && (st = rpe_budget_check ((m->arena->len + 4096) * (sizeof (Obj) + 64))) != RPE_OK)
    {
      g_autofree char *limit = rpe_memory_limit_text (st);

      rpe_set_error (m->error, st, "'%s': the pickle's values need more than %s", m->name, limit);
      return NULL;
    }
  o = g_new0 (Obj, 1);
  o->kind = kind;
  if (kind == O_TUPLE || kind == O_LIST || kind == O_DICT)
    o->items = g_ptr_array_new ();
  g_ptr_array_add (m->arena, o);
  return o;
}

static gboolean
push (Machine *m,
      Obj     *o)
{
  if (o == NULL)
    return FALSE;
  if (m->stack->len >= RPE_PICKLE_MAX_STACK)
    {
      rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                     "'%s': the pickle stack grows beyond %u values", m->name, RPE_PICKLE_MAX_STACK);
      return FALSE;
    }
  g_ptr_array_add (m->stack, o);
  return TRUE;
}

static Obj *
pop (Machine *m)
{
  gsize floor = m->marks->len > 0 ? g_array_index (m->marks, gsize, m->marks->len - 1) : 0;

  if (m->stack->len <= floor)
    {
      bad (m, "stack underflow");
      return NULL;
    }
  return g_ptr_array_steal_index (m->stack, m->stack->len - 1);
}

static Obj *
top (Machine *m)
{
  gsize floor = m->marks->len > 0 ? g_array_index (m->marks, gsize, m->marks->len - 1) : 0;

  if (m->stack->len <= floor)
    {
      bad (m, "stack underflow");
      return NULL;
    }
  return g_ptr_array_index (m->stack, m->stack->len - 1);
}

/* Pops everything above the last MARK (and the mark) into `into` (may be NULL:
 * then the values are checked and dropped by the caller through `into`). */
static gboolean
pop_mark (Machine   *m,
          GPtrArray *into)
{
  gsize at;

  if (m->marks->len == 0)
    return bad (m, "no MARK");
  at = g_array_index (m->marks, gsize, m->marks->len - 1);
  g_array_set_size (m->marks, m->marks->len - 1);
  for (gsize i = at; i < m->stack->len; i++)
    g_ptr_array_add (into, g_ptr_array_index (m->stack, i));
  g_ptr_array_set_size (m->stack, (guint) at);
  return TRUE;
}

static const guint8 *
take (Machine *m,
      gsize    n)
{
  const guint8 *p;

  if (n > m->length - m->pos)
    {
      bad (m, "truncated");
      return NULL;
    }
  p = m->data + m->pos;
  m->pos += n;
  return p;
}

static gboolean
take_uint (Machine *m,
           gsize    n,
           guint64 *out)
{
  const guint8 *p = take (m, n);
  guint64 v = 0;

  if (p == NULL)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    v |= (guint64) p[i] << (8 * i);
  *out = v;
  return TRUE;
}

static gboolean
push_string (Machine *m,
             gsize    n_len_bytes)
{
  guint64 n;
  const guint8 *p;
  Obj *o;

  if (!take_uint (m, n_len_bytes, &n))
    return FALSE;
  if (n > RPE_PICKLE_MAX_STRING)
    return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                          "'%s': a pickle string of %" G_GUINT64_FORMAT " bytes exceeds the %"
                          G_GSIZE_FORMAT "-byte limit", m->name, n, RPE_PICKLE_MAX_STRING);
  p = take (m, (gsize) n);
  if (p == NULL)
    return FALSE;
  if (memchr (p, '\0', (gsize) n) != NULL || !g_utf8_validate ((const char *) p, (gssize) n, NULL))
    return bad (m, "a string holds a NUL byte or invalid UTF-8");
  o = new_obj (m, O_STR);
  if (o == NULL)
    return FALSE;
  o->s = g_strndup ((const char *) p, (gsize) n);
  return push (m, o);
}

static gboolean
push_int (Machine *m,
          gint64   v)
{
  Obj *o = new_obj (m, O_INT);

  if (o == NULL)
    return FALSE;
  o->i = v;
  return push (m, o);
}

/* The allow-list.  Anything else is refused by name. */
static gboolean
push_global (Machine    *m,
             const char *module,
             const char *name)
{
  static const struct
  {
    const char *name;
    gboolean    float_ok;
    RpeDType    dtype;
  } storages[] = {
    { "FloatStorage", TRUE, RPE_DTYPE_F32 },
    { "DoubleStorage", TRUE, RPE_DTYPE_F64 },
    { "HalfStorage", TRUE, RPE_DTYPE_F16 },
    { "BFloat16Storage", TRUE, RPE_DTYPE_BF16 },
    { "LongStorage", TRUE, RPE_DTYPE_I64 },
    { "IntStorage", TRUE, RPE_DTYPE_I32 },
    { "ShortStorage", FALSE, RPE_DTYPE_F32 },
    { "CharStorage", FALSE, RPE_DTYPE_F32 },
    { "ByteStorage", FALSE, RPE_DTYPE_F32 },
    { "BoolStorage", FALSE, RPE_DTYPE_F32 },
  };
  Obj *o = new_obj (m, O_GLOBAL);

  if (o == NULL)
    return FALSE;
  o->s = g_strdup_printf ("%s.%s", module, name);
  if (strcmp (module, "collections") == 0 && strcmp (name, "OrderedDict") == 0)
    o->global = G_ORDERED_DICT;
  else if (strcmp (module, "torch._utils") == 0 && strcmp (name, "_rebuild_tensor_v2") == 0)
    o->global = G_REBUILD_TENSOR_V2;
  else if (strcmp (module, "torch._utils") == 0 && strcmp (name, "_rebuild_parameter") == 0)
    o->global = G_REBUILD_PARAMETER;
  else
    {
      gboolean found = FALSE;

      if (strcmp (module, "torch") == 0)
        for (gsize i = 0; i < G_N_ELEMENTS (storages); i++)
          if (strcmp (name, storages[i].name) == 0)
            {
              o->global = G_STORAGE_TYPE;
              o->float_ok = storages[i].float_ok;
              o->dtype = storages[i].dtype;
              found = TRUE;
              break;
            }
      if (!found)
        return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                              "'%s': the pickle refers to the Python global '%s', which is not allowed: "
                              "only plain state_dicts of tensors are read, and nothing in the file is "
                              "ever executed", m->name, o->s);
    }
  return push (m, o);
}

/* "module\nname\n" of the GLOBAL opcode */
static gboolean
read_line (Machine  *m,
           char    **out)
{
  const guint8 *start = m->data + m->pos;
  const guint8 *nl;
  gsize avail = m->length - m->pos, limit = MIN (avail, (gsize) 256);

  nl = memchr (start, '\n', limit);
  if (nl == NULL)
    return bad (m, "GLOBAL name too long or unterminated");
  if (memchr (start, '\0', (gsize) (nl - start)) != NULL
      || !g_utf8_validate ((const char *) start, nl - start, NULL))
    return bad (m, "GLOBAL name holds a NUL byte or invalid UTF-8");
  *out = g_strndup ((const char *) start, (gsize) (nl - start));
  m->pos += (gsize) (nl - start) + 1;
  return TRUE;
}

static gboolean
get_size (Machine    *m,
          const Obj  *o,
          gsize      *out,
          const char *what)
{
  if (o->kind != O_INT || o->i < 0)
    {
      g_autofree char *msg = g_strdup_printf ("%s is not a non-negative integer", what);
      return bad (m, msg);
    }
  *out = (gsize) o->i;
  return TRUE;
}

static gboolean
get_dims (Machine    *m,
          const Obj  *o,
          gsize      *dims,
          gsize      *n,
          const char *what)
{
  if (o->kind != O_TUPLE)
    {
      g_autofree char *msg = g_strdup_printf ("the tensor %s is not a tuple", what);
      return bad (m, msg);
    }
  if (o->items->len > RPE_TENSOR_MAX_DIMS)
    return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                          "'%s': a tensor has %u dimensions; at most %d are supported",
                          m->name, o->items->len, RPE_TENSOR_MAX_DIMS);
  *n = o->items->len;
  for (guint i = 0; i < o->items->len; i++)
    if (!get_size (m, g_ptr_array_index (o->items, i), &dims[i], what))
      return FALSE;
  return TRUE;
}

/* _rebuild_tensor_v2 (storage, storage_offset, size, stride, requires_grad,
 * backward_hooks[, metadata]) */
static Obj *
rebuild_tensor (Machine *m,
                Obj     *args)
{
  Obj *storage, *o;
  TensorInfo ti = { 0 };
  gsize nstride = 0, count = 0, extent;

  if (args->items->len != 6 && args->items->len != 7)
    {
      bad (m, "_rebuild_tensor_v2 takes 6 or 7 arguments");
      return NULL;
    }
  storage = g_ptr_array_index (args->items, 0);
  if (storage->kind != O_STORAGE)
    {
      bad (m, "_rebuild_tensor_v2's first argument is not a storage");
      return NULL;
    }
  if (!get_size (m, g_ptr_array_index (args->items, 1), &ti.offset, "the storage offset")
      || !get_dims (m, g_ptr_array_index (args->items, 2), ti.shape, &ti.ndim, "size")
      || !get_dims (m, g_ptr_array_index (args->items, 3), ti.stride, &nstride, "stride"))
    return NULL;
  if (nstride != ti.ndim)
    {
      bad (m, "a tensor's size and stride differ in length");
      return NULL;
    }
  if (!rpe_size_prod (&count, ti.ndim, ti.shape))
    {
      rpe_set_error (m->error, RPE_ERROR_OVERFLOW, "'%s': a tensor's element count overflows", m->name);
      return NULL;
    }
  /* the last element it reaches: offset + sum (shape[i] - 1) * stride[i] */
  extent = ti.offset;
  if (count > 0)
    for (gsize i = 0; i < ti.ndim; i++)
      {
        gsize step;

        if (!rpe_size_mul (ti.shape[i] - 1, ti.stride[i], &step) || !rpe_size_add (extent, step, &extent))
          {
            rpe_set_error (m->error, RPE_ERROR_OVERFLOW, "'%s': a tensor's extent overflows", m->name);
            return NULL;
          }
      }
  if (count > 0 && extent >= (gsize) storage->i)
    {
      rpe_set_error (m->error, RPE_ERROR_FORMAT,
                     "'%s': a tensor reaches element %" G_GSIZE_FORMAT " of storage '%s', which holds %"
                     G_GINT64_FORMAT, m->name, extent, storage->s, storage->i);
      return NULL;
    }
  o = new_obj (m, O_TENSOR);
  if (o == NULL)
    return NULL;
  o->storage = storage;
  o->tensor = g_memdup2 (&ti, sizeof ti);
  return o;
}

static gboolean
do_reduce (Machine *m)
{
  Obj *args = pop (m), *callable, *o;

  if (args == NULL || (callable = pop (m)) == NULL)
    return FALSE;
  if (callable->kind != O_GLOBAL)
    return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                          "'%s': REDUCE at byte %" G_GSIZE_FORMAT " calls something that is not an "
                          "allowed global", m->name, m->op_pos);
  if (args->kind != O_TUPLE)
    return bad (m, "REDUCE arguments are not a tuple");
  switch (callable->global)
    {
    case G_ORDERED_DICT:
      if (args->items->len != 0)
        return bad (m, "OrderedDict called with arguments");
      o = new_obj (m, O_DICT);
      break;
    case G_REBUILD_TENSOR_V2:
      o = rebuild_tensor (m, args);
      break;
    case G_REBUILD_PARAMETER:
      /* _rebuild_parameter (data, requires_grad, backward_hooks): the tensor itself */
      if (args->items->len != 3 || ((Obj *) g_ptr_array_index (args->items, 0))->kind != O_TENSOR)
        return bad (m, "_rebuild_parameter takes a tensor and 2 more arguments");
      o = g_ptr_array_index (args->items, 0);
      break;
    case G_STORAGE_TYPE:
    default:
      return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                            "'%s': the pickle calls '%s', which is not allowed", m->name, callable->s);
    }
  return push (m, o);
}

/* ('storage', torch.FloatStorage, '<key>', '<location>', numel) */
static gboolean
do_persid (Machine *m)
{
  Obj *pid = pop (m), *o, *tag, *type, *key, *numel;
  gsize n = 0, bytes;

  if (pid == NULL)
    return FALSE;
  if (pid->kind != O_TUPLE || pid->items->len != 5)
    return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                          "'%s': unsupported persistent id at byte %" G_GSIZE_FORMAT
                          " (only tensor storages are read)", m->name, m->op_pos);
  tag = g_ptr_array_index (pid->items, 0);
  type = g_ptr_array_index (pid->items, 1);
  key = g_ptr_array_index (pid->items, 2);
  numel = g_ptr_array_index (pid->items, 4);
  if (tag->kind != O_STR || strcmp (tag->s, "storage") != 0)
    return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                          "'%s': unsupported persistent id at byte %" G_GSIZE_FORMAT
                          " (only tensor storages are read)", m->name, m->op_pos);
  if (type->kind != O_GLOBAL || type->global != G_STORAGE_TYPE)
    return bad (m, "a storage's type is not a storage class");
  if (key->kind != O_STR || key->s[0] == '\0' || strchr (key->s, '/') != NULL || strcmp (key->s, "..") == 0)
    return bad (m, "a storage key is not a plain name");
  if (!get_size (m, numel, &n, "a storage's size"))
    return FALSE;
  if (!rpe_size_mul (n, type->float_ok ? rpe_dtype_size (type->dtype) : 8, &bytes) || n > G_MAXINT64)
    return rpe_set_error (m->error, RPE_ERROR_OVERFLOW, "'%s': a storage's size overflows", m->name);
  o = new_obj (m, O_STORAGE);
  if (o == NULL)
    return FALSE;
  o->float_ok = type->float_ok;
  o->dtype = type->dtype;
  o->s = g_strdup (key->s);
  o->i = (gint64) n;
  return push (m, o);
}

static gboolean
memo_put (Machine *m,
          guint64  index)
{
  Obj *o = top (m);

  if (o == NULL)
    return FALSE;
  if (g_hash_table_size (m->memo) >= RPE_PICKLE_MAX_MEMO
      && !g_hash_table_contains (m->memo, GSIZE_TO_POINTER ((gsize) index)))
    return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                          "'%s': the pickle memo grows beyond %u entries", m->name, RPE_PICKLE_MAX_MEMO);
  g_hash_table_insert (m->memo, GSIZE_TO_POINTER ((gsize) index), o);
  return TRUE;
}

static gboolean
memo_get (Machine *m,
          guint64  index)
{
  Obj *o = g_hash_table_lookup (m->memo, GSIZE_TO_POINTER ((gsize) index));

  if (o == NULL)
    return bad (m, "memo GET of an unset index");
  return push (m, o);
}

/* Runs the machine to STOP; returns the pickled value (owned by the arena). */
static Obj *
run (Machine *m)
{
  while (TRUE)
    {
      guint8 op;
      guint64 u;
      Obj *o, *v, *k;

      m->op_pos = m->pos;
      if (m->pos >= m->length)
        {
          bad (m, "no STOP opcode");
          return NULL;
        }
      op = m->data[m->pos++];
      switch (op)
        {
        case 0x80: /* PROTO */
          if (!take_uint (m, 1, &u))
            return NULL;
          if (u < 2 || u > 5)
            {
              rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                             "'%s': pickle protocol %" G_GUINT64_FORMAT " is not supported", m->name, u);
              return NULL;
            }
          break;
        case 0x95: /* FRAME: a hint only */
          if (!take_uint (m, 8, &u))
            return NULL;
          if (u > m->length - m->pos)
            {
              bad (m, "FRAME longer than the data");
              return NULL;
            }
          break;
        case '}':
          if (!push (m, new_obj (m, O_DICT)))
            return NULL;
          break;
        case ']':
          if (!push (m, new_obj (m, O_LIST)))
            return NULL;
          break;
        case ')':
          if (!push (m, new_obj (m, O_TUPLE)))
            return NULL;
          break;
        case '(':
          if (m->marks->len >= RPE_PICKLE_MAX_STACK)
            {
              rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED, "'%s': too many MARKs", m->name);
              return NULL;
            }
          {
            gsize at = m->stack->len;

            g_array_append_val (m->marks, at);
          }
          break;
        case 't':
          o = new_obj (m, O_TUPLE);
          if (o == NULL || !pop_mark (m, o->items) || !push (m, o))
            return NULL;
          break;
        case 0x85: case 0x86: case 0x87: /* TUPLE1..3 */
          {
            guint n = op - 0x84u;
            Obj *vals[3];

            for (guint i = 0; i < n; i++)
              if ((vals[n - 1 - i] = pop (m)) == NULL)
                return NULL;
            o = new_obj (m, O_TUPLE);
            if (o == NULL)
              return NULL;
            for (guint i = 0; i < n; i++)
              g_ptr_array_add (o->items, vals[i]);
            if (!push (m, o))
              return NULL;
          }
          break;
        case 'J':
          if (!take_uint (m, 4, &u) || !push_int (m, (gint64) (gint32) (guint32) u))
            return NULL;
          break;
        case 'K':
          if (!take_uint (m, 1, &u) || !push_int (m, (gint64) u))
            return NULL;
          break;
        case 'M':
          if (!take_uint (m, 2, &u) || !push_int (m, (gint64) u))
            return NULL;
          break;
        case 0x8a: /* LONG1: n bytes, little-endian two's complement */
          {
            guint64 n;
            gint64 val;

            if (!take_uint (m, 1, &n))
              return NULL;
            if (n > 8)
              {
                rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                               "'%s': a pickled integer of %" G_GUINT64_FORMAT " bytes is too large",
                               m->name, n);
                return NULL;
              }
            if (!take_uint (m, (gsize) n, &u))
              return NULL;
            if (n > 0 && n < 8 && (u >> (8 * n - 1)) & 1)
              u |= ~(guint64) 0 << (8 * n);   /* sign-extend */
            memcpy (&val, &u, 8);
            if (!push_int (m, n == 0 ? 0 : val))
              return NULL;
          }
          break;
        case 'G': /* BINFLOAT: 8 bytes, big-endian double; no state_dict leaf we read needs its value */
          if (take (m, 8) == NULL || !push (m, new_obj (m, O_FLOAT)))
            return NULL;
          break;
        case 0x8c: /* SHORT_BINUNICODE */
        case 'U':  /* SHORT_BINSTRING */
          if (!push_string (m, 1))
            return NULL;
          break;
        case 'X':  /* BINUNICODE */
        case 'T':  /* BINSTRING (a signed length; > 2^31 is caught by the string limit) */
          if (!push_string (m, 4))
            return NULL;
          break;
        case 0x8d: /* BINUNICODE8 */
          if (!push_string (m, 8))
            return NULL;
          break;
        case 0x88: case 0x89:
          o = new_obj (m, O_BOOL);
          if (o == NULL)
            return NULL;
          o->i = op == 0x88;
          if (!push (m, o))
            return NULL;
          break;
        case 'N':
          if (!push (m, new_obj (m, O_NONE)))
            return NULL;
          break;
        case 'q':
          if (!take_uint (m, 1, &u) || !memo_put (m, u))
            return NULL;
          break;
        case 'r':
          if (!take_uint (m, 4, &u) || !memo_put (m, u))
            return NULL;
          break;
        case 0x94: /* MEMOIZE */
          if (!memo_put (m, g_hash_table_size (m->memo)))
            return NULL;
          break;
        case 'h':
          if (!take_uint (m, 1, &u) || !memo_get (m, u))
            return NULL;
          break;
        case 'j':
          if (!take_uint (m, 4, &u) || !memo_get (m, u))
            return NULL;
          break;
        case 's': /* SETITEM */
          if ((v = pop (m)) == NULL || (k = pop (m)) == NULL || (o = top (m)) == NULL)
            return NULL;
          if (o->kind != O_DICT)
            {
              bad (m, "SETITEM on something that is not a dict");
              return NULL;
            }
          g_ptr_array_add (o->items, k);
          g_ptr_array_add (o->items, v);
          break;
        case 'u': /* SETITEMS */
          {
            g_autoptr (GPtrArray) kv = g_ptr_array_new ();

            if (!pop_mark (m, kv) || (o = top (m)) == NULL)
              return NULL;
            if (o->kind != O_DICT || kv->len % 2 != 0)
              {
                bad (m, "SETITEMS on something that is not a dict, or an odd number of values");
                return NULL;
              }
            for (guint i = 0; i < kv->len; i++)
              g_ptr_array_add (o->items, g_ptr_array_index (kv, i));
          }
          break;
        case 'a': /* APPEND */
          if ((v = pop (m)) == NULL || (o = top (m)) == NULL)
            return NULL;
          if (o->kind != O_LIST)
            {
              bad (m, "APPEND on something that is not a list");
              return NULL;
            }
          g_ptr_array_add (o->items, v);
          break;
        case 'e': /* APPENDS */
          {
            g_autoptr (GPtrArray) vals = g_ptr_array_new ();

            if (!pop_mark (m, vals) || (o = top (m)) == NULL)
              return NULL;
            if (o->kind != O_LIST)
              {
                bad (m, "APPENDS on something that is not a list");
                return NULL;
              }
            for (guint i = 0; i < vals->len; i++)
              g_ptr_array_add (o->items, g_ptr_array_index (vals, i));
          }
          break;
        case 'c': /* GLOBAL */
          {
            g_autofree char *module = NULL, *name = NULL;

            if (!read_line (m, &module) || !read_line (m, &name) || !push_global (m, module, name))
              return NULL;
          }
          break;
        case 0x93: /* STACK_GLOBAL */
          if ((v = pop (m)) == NULL || (k = pop (m)) == NULL)
            return NULL;
          if (v->kind != O_STR || k->kind != O_STR)
            {
              bad (m, "STACK_GLOBAL needs two strings");
              return NULL;
            }
          if (!push_global (m, k->s, v->s))
            return NULL;
          break;
        case 'R':
          if (!do_reduce (m))
            return NULL;
          break;
        case 'Q':
          if (!do_persid (m))
            return NULL;
          break;
        case 'b': /* BUILD: only an OrderedDict's attributes (_metadata), ignored */
          if ((v = pop (m)) == NULL || (o = top (m)) == NULL)
            return NULL;
          if (o->kind != O_DICT)
            {
              rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                             "'%s': BUILD at byte %" G_GSIZE_FORMAT " on something that is not a dict",
                             m->name, m->op_pos);
              return NULL;
            }
          break;
        case '.': /* STOP */
          return pop (m);
        default:
          {
            const char *n = opcode_name (op);

            if (n != NULL)
              rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                             "'%s': the pickle opcode %s (0x%02x) at byte %" G_GSIZE_FORMAT
                             " is not allowed: only plain state_dicts of tensors are read",
                             m->name, n, op, m->op_pos);
            else
              rpe_set_error (m->error, RPE_ERROR_FORMAT,
                             "'%s': unknown pickle opcode 0x%02x at byte %" G_GSIZE_FORMAT,
                             m->name, op, m->op_pos);
            return NULL;
          }
        }
    }
}

void
rpe_pickle_tensor_free (RpePickleTensor *t)
{
  if (t == NULL)
    return;
  g_free (t->name);
  g_free (t->storage_key);
  g_free (t);
}

static gboolean
flatten (Machine    *m,
         const Obj  *o,
         const char *prefix,
         guint       depth,
         GPtrArray  *out)
{
  gboolean is_dict = o->kind == O_DICT;
  guint step = is_dict ? 2 : 1;

  if (depth > RPE_PICKLE_MAX_DEPTH)
    return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                          "'%s': the state_dict is nested more than %u levels deep", m->name,
                          RPE_PICKLE_MAX_DEPTH);
  for (guint i = 0; i + step - 1 < o->items->len; i += step)
    {
      const Obj *key = is_dict ? g_ptr_array_index (o->items, i) : NULL;
      const Obj *val = g_ptr_array_index (o->items, i + step - 1);
      g_autofree char *k = NULL, *name = NULL;

      if (++m->visits > RPE_PICKLE_MAX_OBJECTS)
        return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                              "'%s': the state_dict has more than %u entries (counting shared ones "
                              "each time they appear)", m->name, RPE_PICKLE_MAX_OBJECTS);
      if (!is_dict)
        k = g_strdup_printf ("%u", i);
      else if (key->kind == O_STR)
        k = g_strdup (key->s);
      else if (key->kind == O_INT)
        k = g_strdup_printf ("%" G_GINT64_FORMAT, key->i);
      else
        continue;
      name = prefix != NULL ? g_strconcat (prefix, ".", k, NULL) : g_steal_pointer (&k);
      if (val->kind == O_TENSOR && val->storage->float_ok)
        {
          RpePickleTensor *t;

          if (out->len >= RPE_PICKLE_MAX_TENSORS)
            return rpe_set_error (m->error, RPE_ERROR_UNSUPPORTED,
                                  "'%s': more than %u tensors", m->name, RPE_PICKLE_MAX_TENSORS);
          t = g_new0 (RpePickleTensor, 1);
          t->name = g_steal_pointer (&name);
          t->dtype = val->storage->dtype;
          t->storage_key = g_strdup (val->storage->s);
          t->storage_numel = (gsize) val->storage->i;
          t->offset = val->tensor->offset;
          t->ndim = val->tensor->ndim;
          memcpy (t->shape, val->tensor->shape, sizeof t->shape);
          memcpy (t->stride, val->tensor->stride, sizeof t->stride);
          g_ptr_array_add (out, t);
        }
      else if (val->kind == O_DICT || val->kind == O_LIST || val->kind == O_TUPLE)
        {
          if (!flatten (m, val, name, depth + 1, out))
            return FALSE;
        }
    }
  return TRUE;
}

GPtrArray *
rpe_pickle_read_state_dict (const guint8 *data,
                            gsize         length,
                            const char   *name_for_errors,
                            GError      **error)
{
  Machine m = { 0 };
  GPtrArray *out = NULL;
  Obj *result;

  m.data = data;
  m.length = length;
  m.name = name_for_errors != NULL ? name_for_errors : "(pickle)";
  m.error = error;
  m.arena = g_ptr_array_new_with_free_func (obj_free);
  m.stack = g_ptr_array_new ();
  m.marks = g_array_new (FALSE, FALSE, sizeof (gsize));
  m.memo = g_hash_table_new (g_direct_hash, g_direct_equal);

  result = run (&m);
  if (result != NULL)
    {
      if (result->kind != O_DICT)
        rpe_set_error (error, RPE_ERROR_UNSUPPORTED,
                       "'%s': the pickle does not hold a state_dict (a dict of tensors)", m.name);
      else
        {
          out = g_ptr_array_new_with_free_func ((GDestroyNotify) rpe_pickle_tensor_free);
          if (!flatten (&m, result, NULL, 0, out))
            g_clear_pointer (&out, g_ptr_array_unref);
        }
    }

  g_hash_table_unref (m.memo);
  g_array_unref (m.marks);
  g_ptr_array_unref (m.stack);
  g_ptr_array_unref (m.arena);
  return out;
}
