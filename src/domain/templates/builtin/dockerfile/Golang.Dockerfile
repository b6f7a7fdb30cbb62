# kiln Dockerfile template: a Go program, compiled in one stage and shipped in a small one.
FROM golang:1 AS build
WORKDIR /src

COPY go.mod go.sum* ./
RUN go mod download

COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/app .

FROM debian:stable-slim
COPY --from=build /out/app /usr/local/bin/app
USER nobody
ENTRYPOINT ["app"]
