# kiln Dockerfile template: a Rust program built with Cargo.
FROM rust:1 AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked

FROM debian:stable-slim
# Replace "app" with the name of your binary (the package name in Cargo.toml).
COPY --from=build /src/target/release/app /usr/local/bin/app
USER nobody
ENTRYPOINT ["app"]
