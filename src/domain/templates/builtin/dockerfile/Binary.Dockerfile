# kiln Dockerfile template: a prebuilt binary (built by an earlier CI job) on a slim base.
FROM debian:stable-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# The binary is expected at bin/app in the build context.
COPY bin/app /usr/local/bin/app
USER nobody
ENTRYPOINT ["app"]
