#!/bin/sh
# The Data Plane API's reload_cmd and restart_cmd: asks the HAProxy master, through the master socket
# given as the only argument, to reload. Used with HAProxy 2.6 only: from 2.7 the Data Plane API reloads
# through master_runtime itself and reads the master's Success=1/0 answer (canUseMasterSocketReload in
# dataplaneapi's configure_data_plane.go). 2.6 answers a reload with nothing, so success here means the
# master took the command; the master keeps the old worker when the new configuration fails to load.
set -eu
if [ "$#" -ne 1 ]; then
  echo "usage: $0 MASTER_SOCKET" >&2
  exit 2
fi
echo reload | socat -t 10 stdio "UNIX-CONNECT:$1"
