#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Boot a U-Boot on QEMU virt (arm64) into a stand-in kernel (qemu/dummy-kernel.S) and
# record the console and QEMU's PL061 trace: the check that the marker fires right
# before the kernel is entered.
#
#   firmware-hooks/u-boot/qemu-smoke.sh [-b u-boot.bin] [-e env.txt] [-o OUTDIR]
#
#   -b  the U-Boot to run (default: build.sh's patched qemu_arm64 build)
#   -e  U-Boot environment as "name=value" lines (default: the patched marker on PL061
#       line 0 through bootrig_mmio, then booti)
#   -o  where console.txt, trace.log and the images go (default: a new temporary dir)
#
# Prints OUTDIR; the exit status is 0 when the stand-in kernel was entered. QEMU runs
# with no network (-nic none) and is stopped by its PID.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
uboot= envtxt= out=
while getopts b:e:o: opt; do
    case $opt in
    b) uboot=$OPTARG ;;
    e) envtxt=$OPTARG ;;
    o) out=$OPTARG ;;
    *) exit 2 ;;
    esac
done
[ -n "$uboot" ] || uboot=$("$here/build.sh")/u-boot.bin
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/bootrig-uboot-smoke.XXXXXX")
mkdir -p "$out"

AS=${CROSS_COMPILE-aarch64-linux-gnu-}as
LD=${CROSS_COMPILE-aarch64-linux-gnu-}ld
OBJCOPY=${CROSS_COMPILE-aarch64-linux-gnu-}objcopy
"$AS" -o "$out/dummy.o" "$here/qemu/dummy-kernel.S"
"$LD" -Ttext=0 -o "$out/dummy.elf" "$out/dummy.o"
"$OBJCOPY" -O binary "$out/dummy.elf" "$out/dummy.Image"

if [ -n "$envtxt" ]; then
    cp "$envtxt" "$out/env.txt"
else
    # An environment in flash replaces the built-in one: name everything booti needs.
    cat >"$out/env.txt" <<'EOF'
bootdelay=0
kernel_addr_r=0x40400000
bootrig_mmio=9030400=17 9030004=1
bootcmd=booti ${kernel_addr_r} - ${fdtcontroladdr}
EOF
fi
mkenvimage -s 0x40000 -o "$out/env.bin" "$out/env.txt"
truncate -s 64M "$out/env.bin"

rm -f "$out/console.txt" "$out/trace.log"
qemu-system-aarch64 -M virt,acpi=off -cpu cortex-a53 -m 512 -nic none \
    -display none -monitor none -serial "file:$out/console.txt" \
    -bios "$uboot" \
    -drive if=pflash,format=raw,index=1,file="$out/env.bin" \
    -device loader,file="$out/dummy.Image",addr=0x40400000,force-raw=on \
    -trace pl061_set_output -D "$out/trace.log" -msg timestamp=on </dev/null &
qemu=$!
entered=1
i=0
while [ $i -lt 300 ]; do
    if grep -q "dummy kernel: entered" "$out/console.txt" 2>/dev/null; then
        entered=0
        break
    fi
    kill -0 "$qemu" 2>/dev/null || break
    sleep 0.1
    i=$((i + 1))
done
kill "$qemu" 2>/dev/null || true
wait "$qemu" 2>/dev/null || true
echo "$out"
exit $entered
