/*
 * cmds.h - the subcommands; each is defined in src/cmd_<name>.c.
 *
 * Copyright (C) 2026 dlplan developers.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * To add a command: write src/cmd_<name>.c defining dl_cmd_<name> (see
 * opt.h), declare it here, list it in dl_cmds[] in main.c, and document it
 * in man/dlplan.1 and the completions (tests/cli/sync.sh checks all four).
 */
#ifndef DL_CMDS_H
#define DL_CMDS_H

#include "opt.h"

extern const struct dl_cmd dl_cmd_check;
extern const struct dl_cmd dl_cmd_emit;
extern const struct dl_cmd dl_cmd_eval;
extern const struct dl_cmd dl_cmd_import;
extern const struct dl_cmd dl_cmd_plan;
extern const struct dl_cmd dl_cmd_predict;
extern const struct dl_cmd dl_cmd_replan;
extern const struct dl_cmd dl_cmd_route;
extern const struct dl_cmd dl_cmd_schedule;
extern const struct dl_cmd dl_cmd_model;

/* All commands, NULL-terminated, in the order --help lists them. */
extern const struct dl_cmd *const dl_cmds[];

#endif
