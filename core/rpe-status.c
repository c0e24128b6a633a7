#include "config.h"

#include "rpe-status.h"

#include <errno.h>

const char *
rpe_status_to_string (RpeStatus status)
{
  switch (status)
    {
    case RPE_OK: return "success";
    case RPE_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case RPE_ERROR_OVERFLOW: return "size overflow";
    case RPE_ERROR_NO_MEMORY: return "over the memory budget";
    case RPE_ERROR_CANCELLED: return "cancelled";
    case RPE_ERROR_NOT_FINITE: return "input holds NaN or infinity";
    case RPE_ERROR_IO: return "input/output error";
    case RPE_ERROR_FORMAT: return "malformed file";
    case RPE_ERROR_UNSUPPORTED: return "unsupported";
    case RPE_ERROR_NOT_FOUND: return "not found";
    case RPE_ERROR_INTERNAL: return "internal library failure";
    case RPE_ERROR_SYSTEM_MEMORY:
      return "out of memory: the system's limit for this process (ulimit -v or -d) or the machine's memory "
             "leaves too little room";
    case RPE_ERROR_RANGE: return "values too large: the result overflows float32";
    case RPE_ERROR_DEGENERATE:
      return "degenerate input: zero (or below float32's range) where a direction or a scale is needed";
    case RPE_ERROR_NO_SPACE:
      return "not enough free space on the disk for the output";
    default: return "unknown status";
    }
}

RpeStatus
rpe_status_for_write_errno (int saved_errno)
{
  return saved_errno == ENOSPC || saved_errno == EDQUOT || saved_errno == EFBIG ? RPE_ERROR_NO_SPACE : RPE_ERROR_IO;
}
