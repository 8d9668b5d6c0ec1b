package main

// The image table: how a container image maps to programs on this machine.
//
// No container runtime runs here, so a container's command is run as a local process.
// Each rule matches an image repository (registry host, tag and digest ignored) and gives:
//   - entrypoint/cmd: the image's ENTRYPOINT and CMD, used when the pod leaves command/args empty;
//   - programs: argv[0] (exact, or its base name) -> the executable to run: a host path, or a
//     container path that files bind-mounts;
//   - files: container path -> local file, bind-mounted read-only into the container's view
//     (k6 at /usr/bin/k6, from $K6_BINARY); values are expanded from the agent's environment;
//   - hostPrograms: any other argv[0] is looked up as an absolute host path or on the host PATH.
//
// An image that matches no rule fails like a pull of a missing image (ErrImagePull, then
// ImagePullBackOff), and so does every image whose name contains "does-not-exist".
//
// To add an image, add a rule here.

import (
	"fmt"
	"os"
	"path"
	"strings"
)

type imageRule struct {
	repositories []string          // e.g. "grafana/k6", "library/busybox"
	entrypoint   []string          // image ENTRYPOINT
	cmd          []string          // image CMD
	programs     map[string]string // argv[0] or its base name -> executable
	hostPrograms bool              // other argv[0] are looked up on the host PATH
	files        map[string]string // path in the container -> local file, bind-mounted (so `sh -c "k6 ..."` works)
}

var imageTable = []imageRule{
	{
		repositories: []string{"grafana/k6"},
		entrypoint:   []string{"k6"},
		cmd:          []string{"--help"},
		programs:     map[string]string{"k6": "/usr/bin/k6", "sh": "/bin/sh", "ash": "/bin/sh"},
		hostPrograms: true,
		files:        map[string]string{"/usr/bin/k6": "$K6_BINARY"},
	},
	{
		repositories: []string{"library/busybox", "library/alpine", "library/debian", "library/ubuntu"},
		cmd:          []string{"sh"},
		programs:     map[string]string{"sh": "/bin/sh", "ash": "/bin/sh", "bash": "/bin/bash"},
		hostPrograms: true,
	},
}

const failingImageMarker = "does-not-exist"

// imageRepository returns the repository path of an image reference:
// "docker.io/grafana/k6:2.2.0" -> "grafana/k6", "busybox" -> "library/busybox".
func imageRepository(image string) string {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i >= 0 && !strings.Contains(ref[i:], "/") {
		ref = ref[:i]
	}
	parts := strings.Split(ref, "/")
	if len(parts) > 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost") {
		parts = parts[1:]
	}
	if len(parts) == 1 {
		parts = append([]string{"library"}, parts...)
	}
	return strings.Join(parts, "/")
}

// lookupImage returns the rule for an image, or an error worded like a failed pull.
func lookupImage(image string) (*imageRule, error) {
	if strings.Contains(image, failingImageMarker) {
		return nil, fmt.Errorf("failed to pull and unpack image %q: failed to resolve reference %q: %q: not found", image, image, image)
	}
	repo := imageRepository(image)
	for i := range imageTable {
		for _, r := range imageTable[i].repositories {
			if r == repo {
				return &imageTable[i], nil
			}
		}
	}
	return nil, fmt.Errorf("failed to pull and unpack image %q: %q: not found (the test cluster runs only images in its image table, test/cluster/agent/images.go)", image, repo)
}

// resolveArgv builds the process argv from the image defaults and the container's command/args,
// like a container runtime does, and maps argv[0] to a local executable.
func (r *imageRule) resolveArgv(command, args []string) ([]string, error) {
	var argv []string
	switch {
	case len(command) > 0:
		argv = append(append(argv, command...), args...)
	case len(args) > 0:
		argv = append(append(argv, r.entrypoint...), args...)
	default:
		argv = append(append(argv, r.entrypoint...), r.cmd...)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("no command specified")
	}
	prog := argv[0]
	local, ok := r.programs[prog]
	if !ok {
		local, ok = r.programs[path.Base(prog)]
	}
	if ok {
		host := local
		if f, isFile := r.files[local]; isFile {
			// a file bind-mounted into the container (k6 at /usr/bin/k6): exec it there, so a
			// volume mounted over the host path (an emptyDir at /tmp, say) cannot hide it
			host = os.ExpandEnv(f)
		}
		if host == "" {
			return nil, fmt.Errorf("exec: %q: the node agent has no local program for it (start the cluster with K6_BINARY set)", prog)
		}
		if _, err := os.Stat(host); err != nil {
			return nil, fmt.Errorf("exec: %q: local program %s: %v", prog, host, err)
		}
		argv[0] = local
		return argv, nil
	}
	if !r.hostPrograms {
		return nil, fmt.Errorf("exec: %q: executable file not found in the image table", prog)
	}
	found, err := lookPath(prog)
	if err != nil {
		return nil, err
	}
	argv[0] = found
	return argv, nil
}

func lookPath(prog string) (string, error) {
	if strings.Contains(prog, "/") {
		if st, err := os.Stat(prog); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return prog, nil
		}
		return "", fmt.Errorf("exec: %q: no such file or directory", prog)
	}
	for _, dir := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		p := dir + "/" + prog
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", prog)
}
