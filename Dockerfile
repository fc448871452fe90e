# dralloc: build on Debian 12 with the same script users run, ship a slim runtime.
FROM debian:12 AS build
WORKDIR /src
COPY . .
RUN DRALLOC_NO_BROWSER=1 ./scripts/deps.sh && cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DDRALLOC_TESTS=OFF \
    && cmake --build build-release -j "$(nproc)"

FROM debian:12-slim
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends \
      libjansson4 libyaml-0-2 libxxhash0 libre2-9 libmicrohttpd12 libcurl4 libjemalloc2 ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build-release/dralloc /usr/local/bin/dralloc
# non-root (the distroless "nonroot" uid); nothing is written at run time
USER 65532:65532
EXPOSE 8888
# alive = the HTTP server answers; readiness (listed, not stale, leader) is /readyz, for Kubernetes probes
HEALTHCHECK --interval=10s --timeout=2s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8888/healthz >/dev/null || exit 1
ENTRYPOINT ["/usr/local/bin/dralloc"]
CMD ["serve", "--listen", "0.0.0.0:8888"]
