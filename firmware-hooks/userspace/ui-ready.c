// SPDX-License-Identifier: MIT
/*
 * ui-ready: the userspace boot marker of bootrig.
 *
 * Raises one GPIO line through the kernel's GPIO character device (uapi v2)
 * and then writes "bootrig: marker ui_ready" to /dev/kmsg, so the tag gets a
 * printk timestamp like the kernel's own markers. Run it at the moment the
 * application's UI is shown.
 *
 *   ui-ready [-c CHIP] [-l LINE] [-n NAME] [-H]
 *
 * Needs only libc and <linux/gpio.h> (Linux 5.10 or later headers).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/gpio.h>

#define DEFAULT_CHIP "/dev/gpiochip0"
#define DEFAULT_LINE 4
#define DEFAULT_NAME "ui_ready"
#define KMSG "/dev/kmsg"

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s [-c CHIP] [-l LINE] [-n NAME] [-H]\n"
		"Raise a GPIO line, then log \"bootrig: marker NAME\" to " KMSG ".\n"
		"  -c, --chip CHIP  GPIO character device (default " DEFAULT_CHIP ")\n"
		"  -l, --line LINE  line offset on that chip (default %d)\n"
		"  -n, --name NAME  marker name (default " DEFAULT_NAME ")\n"
		"  -H, --hold       keep the line requested (stay running) instead of\n"
		"                   releasing it on exit\n"
		"  -h, --help       this text\n",
		prog, DEFAULT_LINE);
}

static int parse_line(const char *s, unsigned int *line)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > UINT_MAX)
		return -1;
	*line = (unsigned int)v;
	return 0;
}

/* Request the line as an output driven high; returns the line fd or -1. */
static int raise_line(const char *chip, unsigned int line)
{
	struct gpio_v2_line_request req;
	int fd, ret;

	fd = open(chip, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ui-ready: cannot open GPIO chip %s: %s\n", chip,
			strerror(errno));
		return -1;
	}

	memset(&req, 0, sizeof(req));
	req.offsets[0] = line;
	req.num_lines = 1;
	req.config.flags = GPIO_V2_LINE_FLAG_OUTPUT;
	/* one attribute: the initial output value, high */
	req.config.num_attrs = 1;
	req.config.attrs[0].attr.id = GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES;
	req.config.attrs[0].attr.values = 1;
	req.config.attrs[0].mask = 1;
	snprintf(req.consumer, sizeof(req.consumer), "bootrig-ui-ready");

	ret = ioctl(fd, GPIO_V2_GET_LINE_IOCTL, &req);
	if (ret < 0) {
		int err = errno;

		fprintf(stderr, "ui-ready: cannot raise line %u of %s: %s\n", line,
			chip, strerror(err));
		if (err == ENOTTY)
			fprintf(stderr,
				"ui-ready: %s has no GPIO uapi v2 (kernel older than 5.10 or not a GPIO chip)\n",
				chip);
		close(fd);
		return -1;
	}
	close(fd);
	return req.fd;
}

static int log_marker(const char *name)
{
	char msg[128];
	int fd, len;
	ssize_t n;

	/* <5> is KERN_NOTICE: printed with the printk timestamp when not filtered. */
	len = snprintf(msg, sizeof(msg), "<5>bootrig: marker %s\n", name);
	if (len < 0 || (size_t)len >= sizeof(msg)) {
		fprintf(stderr, "ui-ready: marker name too long: %s\n", name);
		return -1;
	}

	fd = open(KMSG, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ui-ready: cannot open %s: %s\n", KMSG, strerror(errno));
		return -1;
	}
	n = write(fd, msg, (size_t)len);
	if (n != len) {
		fprintf(stderr, "ui-ready: cannot write to %s: %s\n", KMSG,
			n < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "chip", required_argument, NULL, 'c' },
		{ "line", required_argument, NULL, 'l' },
		{ "name", required_argument, NULL, 'n' },
		{ "hold", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *chip = DEFAULT_CHIP;
	const char *name = DEFAULT_NAME;
	unsigned int line = DEFAULT_LINE;
	int hold = 0;
	int opt, line_fd;

	while ((opt = getopt_long(argc, argv, "c:l:n:Hh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			chip = optarg;
			break;
		case 'l':
			if (parse_line(optarg, &line)) {
				fprintf(stderr, "ui-ready: bad line offset '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			name = optarg;
			break;
		case 'H':
			hold = 1;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ui-ready: unexpected argument '%s'\n", argv[optind]);
		usage(stderr, argv[0]);
		return 2;
	}

	line_fd = raise_line(chip, line);
	if (line_fd < 0)
		return 1;
	if (log_marker(name))
		return 1;

	if (hold) {
		/* The line stays high while its request is held. */
		for (;;)
			pause();
	}
	/*
	 * Releasing the line leaves its level to the driver; PL061 and most
	 * SoC controllers keep driving it. Use --hold where that is not so.
	 */
	close(line_fd);
	return 0;
}
