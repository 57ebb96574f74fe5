/* SPDX-License-Identifier: Apache-2.0 */
/* One function per subcommand, one file per subcommand (host/commands/cmd_<name>.c). */
#ifndef VMC_COMMANDS_H
#define VMC_COMMANDS_H

/* argv[0] is the subcommand name; return value is the process exit code (enum vmc_exit). */
int cmd_list(int argc, char **argv);
int cmd_footprint(int argc, char **argv);
int cmd_idle(int argc, char **argv);
int cmd_disk(int argc, char **argv);
int cmd_wakeups(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_trim(int argc, char **argv);
int cmd_balloon(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_memtest(int argc, char **argv);
int cmd_load(int argc, char **argv);
int cmd_autostop(int argc, char **argv);
int cmd_selftest(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif
