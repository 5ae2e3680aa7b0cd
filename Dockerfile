# The controller image: the compiled controller on Node 24, its production dependencies, and the
# haproxy it validates configurations with: the very binary of the chart's HAProxy image
# (haproxytech/haproxy-debian, chart/values.yaml haproxy.image, which also bundles the Data Plane API).
#
#   docker build -t REGISTRY/haproxy-template-ic:VERSION .
#
# haproxytech/haproxy-debian 3.x builds on Debian trixie: the Node image is trixie too, so the copied
# haproxy finds its libraries (installed below) at the versions it was built against.
ARG NODE_IMAGE=node:24-trixie-slim
# Kept equal to chart/values.yaml's haproxy.image (a spec checks it).
ARG HAPROXY_IMAGE=haproxytech/haproxy-debian:3.2.26

FROM ${HAPROXY_IMAGE} AS haproxy

# npm ci: exactly what package-lock.json says (a spec keeps it in step with package.json).
# --ignore-scripts: no production dependency has an install script, and the development-only node
# package's would download a second Node.
FROM ${NODE_IMAGE} AS build
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY lib lib
COPY streams streams
RUN npm run build

FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# The HAProxy major.minor of the chart's HAProxy image; the build fails if the copied binary's differs.
ARG HAPROXY_VERSION=3.2
COPY --from=haproxy /usr/local/sbin/haproxy /usr/sbin/haproxy
# tini as PID 1 forwards SIGTERM to the controller (and its process group) and reaps the
# haproxy -c processes validation starts. The libraries are the ones the haproxy image installs for
# its binary (its Dockerfile's runtime apt-get line).
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini libssl3t64 zlib1g libpcre2-8-0 liblua5.4-0 libatomic1 libjemalloc2 \
    && rm -rf /var/lib/apt/lists/* \
    && haproxy -v | grep -q "version ${HAPROXY_VERSION}\." \
    && groupadd --system --gid 10001 controller \
    && useradd --system --uid 10001 --gid controller --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin controller
WORKDIR /app
COPY --from=production-dependencies /app/node_modules node_modules
COPY package.json ./
COPY templates templates
COPY --from=build /build/dist dist
# Nothing is written outside TMPDIR, which the chart mounts as a volume: the root file system can be read-only.
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps \
    TMPDIR=/tmp \
    HAPROXY_BIN=/usr/sbin/haproxy
USER 10001:10001
ENTRYPOINT ["/usr/bin/tini", "-g", "--", "/usr/local/bin/node", "/app/dist/streams/main.js"]
CMD ["run"]
