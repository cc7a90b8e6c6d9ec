#!/bin/sh
# Front end for Kconfig through python3-kconfiglib (Debian package).
#   defconfig     write .config with every option at its Kconfig default
#   olddefconfig  update an existing .config, new options at their default
#   menuconfig    the interactive editor
set -e
case "$1" in
defconfig) exec /usr/bin/python3 -m alldefconfig Kconfig ;;
olddefconfig) exec /usr/bin/python3 -m olddefconfig Kconfig ;;
menuconfig) exec /usr/bin/python3 -m menuconfig Kconfig ;;
*) echo "usage: $0 defconfig|olddefconfig|menuconfig" >&2; exit 2 ;;
esac
