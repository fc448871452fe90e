# dralloc: build on Debian 12 with the same script users run, ship a slim runtime.
# Base images pinned to a point release (rebuild on the next one for its fixes); the
# build context is the sources alone (.dockerignore).
FROM debian:12.11 AS build
WORKDIR /src
COPY . .
RUN DRALLOC_NO_BROWSER=1 ./scripts/deps.sh && cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DDRALLOC_TESTS=OFF \
    && cmake --build build-release -j "$(nproc)"

FROM debian:12.11-slim
# libmicrohttpd12 brings GnuTLS (the server's TLS)
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libjansson4 libyaml-0-2 libxxhash0 libre2-9 libsimdjson14 libmicrohttpd12 libcurl4 libjemalloc2 ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build-release/dralloc /usr/local/bin/dralloc
# non-root (the distroless "nonroot" uid); nothing is written at run time
USER 65532:65532
EXPOSE 8888
# alive = the HTTP server answers; readiness (listed, not stale) is /readyz, for Kubernetes
# probes (deploy/: on --health-listen)
HEALTHCHECK --interval=10s --timeout=2s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8888/healthz >/dev/null || exit 1
ENTRYPOINT ["/usr/local/bin/dralloc"]
# Safe by default: loopback only (a sidecar's kube-scheduler, or `docker exec`). To serve
# beyond the container give --listen 0.0.0.0:8888 with --tls-cert-file,
# --tls-private-key-file and --client-ca-file (else /bind and /objects answer 403).
CMD ["serve", "--listen", "127.0.0.1:8888"]
