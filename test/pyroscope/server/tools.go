//go:build tools

package main

import _ "github.com/grafana/pyroscope/cmd/pyroscope"
