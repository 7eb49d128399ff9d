/* SPDX-License-Identifier: MIT */
/*
 * A stand-in arm64 "kernel" for checking the U-Boot hook on QEMU virt: an arm64
 * Image header (so booti takes it) whose code raises PL061 line 1 and prints
 * "dummy kernel: entered" on the PL011, then sleeps. In the pl061 trace, line 0
 * (the bootm marker) rising before line 1 shows the hook ran before the kernel
 * was entered; the gap is what U-Boot still does after the marker.
 *
 *   aarch64-linux-gnu-as -o k.o dummy-kernel.S
 *   aarch64-linux-gnu-ld -Ttext=0 -o k.elf k.o
 *   aarch64-linux-gnu-objcopy -O binary k.elf dummy.Image
 */
	.text
	.globl	_start
_start:
	b	entry			/* code0 */
	.word	0			/* code1 */
	.quad	0			/* text_offset */
	.quad	image_end - _start	/* image_size */
	.quad	0			/* flags: little endian */
	.quad	0, 0, 0			/* res2..res4 */
	.ascii	"ARM\x64"		/* magic */
	.word	0			/* res5 */

entry:
	ldr	x1, =0x09030000		/* PL061 */
	mov	w0, #0x17		/* lines 0-2 and 4 out; 3 is the power key */
	str	w0, [x1, #0x400]	/* GPIODIR */
	mov	w0, #2
	str	w0, [x1, #0x8]		/* GPIODATA, address mask = line 1 */
	ldr	x1, =0x09000000		/* PL011 UARTDR */
	adr	x2, msg
1:	ldrb	w0, [x2], #1
	cbz	w0, 2f
	str	w0, [x1]
	b	1b
2:	wfi
	b	2b

msg:	.asciz	"dummy kernel: entered\r\n"
	.balign	8
	.ltorg
image_end:
