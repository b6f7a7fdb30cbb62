# kiln Dockerfile template: a static Go binary in an otherwise empty image.
FROM golang:1 AS build
WORKDIR /src
COPY go.mod go.sum* ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/app .

FROM scratch
# Certificates for TLS clients; nothing else comes along.
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/app /app
USER 65534
ENTRYPOINT ["/app"]
