#!/bin/sh
# Lays out a new HAProxy pod's configuration volume: the storage directories of the Data Plane API and
# the bootstrap configuration HAProxy runs until the controller deploys one. The bootstrap answers
# /healthz but not /ready, so the pod takes no traffic before then.
set -eu
: "${HAPROXY_CONFIG_FILE:?}" "${HAPROXY_BOOTSTRAP_CONFIG:?}" "${HAPROXY_MAPS_DIR:?}" "${HAPROXY_CERTIFICATES_DIR:?}" "${HAPROXY_GENERAL_DIR:?}"
mkdir -p "$HAPROXY_MAPS_DIR" "$HAPROXY_CERTIFICATES_DIR" "$HAPROXY_GENERAL_DIR" "$(dirname "$HAPROXY_CONFIG_FILE")"
cp "$HAPROXY_BOOTSTRAP_CONFIG" "$HAPROXY_CONFIG_FILE"
