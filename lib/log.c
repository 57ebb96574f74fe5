/* SPDX-License-Identifier: Apache-2.0 */
#include "log.h"

#include "message.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

static const char *log_progname = "vmcost";
static enum vmc_level log_level = VMC_LOG_WARN;
static bool log_syslog;

void vmc_log_init(const char *progname)
{
	const char *slash = strrchr(progname, '/');
	log_progname = slash ? slash + 1 : progname;
	const char *env = getenv("VMCOST_LOG");
	if (env) {
		int level = vmc_log_level_parse(env);
		if (level >= 0)
			log_level = (enum vmc_level)level;
	}
}

void vmc_log_set_level(enum vmc_level level)
{
	log_level = level;
}

enum vmc_level vmc_log_level(void)
{
	return log_level;
}

void vmc_log_use_syslog(bool on)
{
	if (on && !log_syslog)
		openlog(log_progname, LOG_PID, LOG_DAEMON);
	log_syslog = on;
}

int vmc_log_level_parse(const char *s)
{
	static const char *const names[] = {"error", "warn", "info", "debug"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

bool vmc_use_color(FILE *f)
{
	const char *no_color = getenv("NO_COLOR");
	if (no_color && *no_color)
		return false;
	return isatty(fileno(f));
}

__attribute__((format(printf, 2, 0))) static void vlog(enum vmc_level level, const char *fmt,
						       va_list ap)
{
	int saved_errno = errno;
	char msg[2048];
	vmc_verrorf(msg, sizeof msg, fmt, ap);
	if (log_syslog) {
		static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
		syslog(prio[level], "%s", msg);
	} else {
		static const char *const prefix[] = {"error: ", "warning: ", "", ""};
		fprintf(stderr, "%s: %s%s\n", log_progname, prefix[level], msg);
	}
	errno = saved_errno;
}

void vmc_die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(VMC_LOG_ERROR, fmt, ap);
	va_end(ap);
	exit(code);
}

void vmc_warn(const char *fmt, ...)
{
	if (log_level < VMC_LOG_WARN)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(VMC_LOG_WARN, fmt, ap);
	va_end(ap);
}

void vmc_info(const char *fmt, ...)
{
	if (log_level < VMC_LOG_INFO)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(VMC_LOG_INFO, fmt, ap);
	va_end(ap);
}

void vmc_debug(const char *fmt, ...)
{
	if (log_level < VMC_LOG_DEBUG)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog(VMC_LOG_DEBUG, fmt, ap);
	va_end(ap);
}
