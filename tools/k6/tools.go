//go:build tools

// Package tools pins the k6 version that the project's setup builds (scripts/ensure-k6.sh).
package tools

import _ "go.k6.io/k6/v2"
