#!/bin/sh
# Starts the Data Plane API with its configuration file completed by the user from the credentials
# Secret (environment, never logged): the chart's part ends inside the dataplaneapi mapping, the user
# list goes last in it. The file is written to a private volume, readable by this user only.
set -eu
: "${DATAPLANEAPI_BASE_CONFIG:?}" "${DATAPLANEAPI_CONFIG:?}" "${DATAPLANEAPI_BINARY:?}"
: "${DATAPLANE_USERNAME:?the credentials Secret has no dataplane_username}" "${DATAPLANE_PASSWORD:?the credentials Secret has no dataplane_password}"

newline='
'
case "$DATAPLANE_USERNAME$DATAPLANE_PASSWORD" in
  *"$newline"*)
    echo "the Data Plane API username and password must be single lines" >&2
    exit 1
    ;;
esac

# A YAML double-quoted scalar: backslashes and double quotes escaped, everything else as is.
quoted() {
  printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g')"
}

umask 077
{
  cat "$DATAPLANEAPI_BASE_CONFIG"
  printf '  user:\n    - name: %s\n      password: %s\n      insecure: true\n' "$(quoted "$DATAPLANE_USERNAME")" "$(quoted "$DATAPLANE_PASSWORD")"
} > "$DATAPLANEAPI_CONFIG"
exec "$DATAPLANEAPI_BINARY" -f "$DATAPLANEAPI_CONFIG"
