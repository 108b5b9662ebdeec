package main

import (
	_ "github.com/bradleyfalzon/ghinstallation/v2"
	_ "github.com/docker/docker/client"
	_ "github.com/docker/docker/pkg/stdcopy"
	_ "github.com/docker/docker/api/types/container"
	_ "github.com/go-chi/chi/v5"
	_ "github.com/google/go-github/v66/github"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/riverqueue/river"
	_ "github.com/riverqueue/river/riverdriver/riverpgxv5"
	_ "github.com/riverqueue/river/rivermigrate"
	_ "github.com/riverqueue/river/rivertest"
)

func main() {}
