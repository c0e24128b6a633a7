/* rpe-application.h: the RPE Studio application (one window per activation). */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define RPE_TYPE_APPLICATION (rpe_application_get_type ())
G_DECLARE_FINAL_TYPE (RpeApplication, rpe_application, RPE, APPLICATION, AdwApplication)

RpeApplication *rpe_application_new (void);

G_END_DECLS
