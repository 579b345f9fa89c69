# dtq: one static binary. Build: docker build -t dtq .
# Run:   docker run -p 8000:8000 dtq                      (embedded backend, for trying)
#        docker run -p 8000:8000 -e DTQ_REDIS_URL=redis://redis:6379 dtq api
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/dtq ./cmd/dtq

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/dtq /dtq
USER nonroot:nonroot
EXPOSE 8000 8001
ENTRYPOINT ["/dtq"]
CMD ["serve", "--addr", ":8000"]
