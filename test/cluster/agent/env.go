package main

// Environment and volumes of a container, resolved the way a kubelet does.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// resolveEnv returns the container's environment as KEY=VALUE (envFrom, then env, with
// $(VAR) references expanded), plus PATH, HOSTNAME and HOME defaults.
func (w *podWorker) resolveEnv(ctx context.Context, c *ctrRun) ([]string, error) {
	pod := w.latest()
	var order []string
	vals := map[string]string{}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	set("PATH", defaultPath)
	set("HOSTNAME", pod.Name)
	set("HOME", "/root")
	cms := map[string]*v1.ConfigMap{}
	secrets := map[string]*v1.Secret{}
	getCM := func(name string) (*v1.ConfigMap, error) {
		if cm, ok := cms[name]; ok {
			return cm, nil
		}
		cm, err := w.a.cs.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		cms[name] = cm
		return cm, nil
	}
	getSecret := func(name string) (*v1.Secret, error) {
		if s, ok := secrets[name]; ok {
			return s, nil
		}
		s, err := w.a.cs.CoreV1().Secrets(pod.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		secrets[name] = s
		return s, nil
	}
	optional := func(o *bool) bool { return o != nil && *o }

	for _, ef := range c.spec.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, err := getCM(ef.ConfigMapRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && optional(ef.ConfigMapRef.Optional) {
					continue
				}
				return nil, fmt.Errorf("configmap %q not found", ef.ConfigMapRef.Name)
			}
			for k, v := range cm.Data {
				set(ef.Prefix+k, v)
			}
		case ef.SecretRef != nil:
			s, err := getSecret(ef.SecretRef.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && optional(ef.SecretRef.Optional) {
					continue
				}
				return nil, fmt.Errorf("secret %q not found", ef.SecretRef.Name)
			}
			for k, v := range s.Data {
				set(ef.Prefix+k, string(v))
			}
		}
	}
	for _, e := range c.spec.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, vals))
			continue
		}
		vf := e.ValueFrom
		switch {
		case vf.FieldRef != nil:
			v, err := w.fieldRef(pod, vf.FieldRef.FieldPath)
			if err != nil {
				return nil, err
			}
			set(e.Name, v)
		case vf.ResourceFieldRef != nil:
			v, err := w.resourceFieldRef(pod, c.spec.Name, vf.ResourceFieldRef)
			if err != nil {
				return nil, err
			}
			set(e.Name, v)
		case vf.ConfigMapKeyRef != nil:
			ref := vf.ConfigMapKeyRef
			cm, err := getCM(ref.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && optional(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("configmap %q not found", ref.Name)
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if b, ok2 := cm.BinaryData[ref.Key]; ok2 {
					v, ok = string(b), true
				}
			}
			if !ok {
				if optional(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)
			}
			set(e.Name, v)
		case vf.SecretKeyRef != nil:
			ref := vf.SecretKeyRef
			s, err := getSecret(ref.Name)
			if err != nil {
				if apierrors.IsNotFound(err) && optional(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("secret %q not found", ref.Name)
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if optional(ref.Optional) {
					continue
				}
				return nil, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)
			}
			set(e.Name, string(v))
		}
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+vals[k])
	}
	return out, nil
}

func (w *podWorker) fieldRef(pod *v1.Pod, path string) (string, error) {
	if k, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[k], nil
	}
	if k, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[k], nil
	}
	w.mu.Lock()
	ip := w.ip
	w.mu.Unlock()
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return w.node.ip.String(), nil
	case "status.podIP", "status.podIPs":
		if ip == nil {
			return "", nil
		}
		return ip.String(), nil
	case "metadata.labels", "metadata.annotations":
		m := pod.Labels
		if path == "metadata.annotations" {
			m = pod.Annotations
		}
		var lines []string
		for k, v := range m {
			lines = append(lines, fmt.Sprintf("%s=%q", k, v))
		}
		return strings.Join(lines, "\n"), nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// subscript parses `metadata.annotations['key']`.
func subscript(path, prefix string) (string, bool) {
	if !strings.HasPrefix(path, prefix+"[") || !strings.HasSuffix(path, "]") {
		return "", false
	}
	k := path[len(prefix)+1 : len(path)-1]
	k = strings.Trim(k, `'"`)
	return k, true
}

func (w *podWorker) resourceFieldRef(pod *v1.Pod, defaultCtr string, ref *v1.ResourceFieldSelector) (string, error) {
	name := ref.ContainerName
	if name == "" {
		name = defaultCtr
	}
	var ctr *v1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			ctr = &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			ctr = &pod.Spec.InitContainers[i]
		}
	}
	if ctr == nil {
		return "", fmt.Errorf("resourceFieldRef: no container %q", name)
	}
	parts := strings.SplitN(ref.Resource, ".", 2)
	if len(parts) != 2 {
		return "", fmt.Errorf("resourceFieldRef: bad resource %q", ref.Resource)
	}
	var q resource.Quantity
	var ok bool
	switch parts[0] {
	case "limits":
		q, ok = ctr.Resources.Limits[v1.ResourceName(parts[1])]
	case "requests":
		q, ok = ctr.Resources.Requests[v1.ResourceName(parts[1])]
	}
	if !ok { // like the kubelet: node allocatable when unset
		switch parts[1] {
		case "cpu":
			q = resource.MustParse(w.a.cfg.nodeCPU)
		case "memory":
			q = resource.MustParse(w.a.cfg.nodeMemory)
		default:
			q = resource.MustParse("0")
		}
	}
	div := ref.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	v := math.Ceil(float64(q.MilliValue()) / float64(div.MilliValue()))
	return strconv.FormatInt(int64(v), 10), nil
}

// expand replaces $(VAR) with values from vars ($$ escapes), leaving unknown references as is.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func expandAll(in []string, vars map[string]string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vars)
	}
	return out
}

func envToMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if i := strings.IndexByte(kv, '='); i >= 0 {
			m[kv[:i]] = kv[i+1:]
		}
	}
	return m
}

// ---- volumes ----

func (w *podWorker) readOnlyVolume(name string) bool {
	for _, v := range w.latest().Spec.Volumes {
		if v.Name == name {
			return v.ConfigMap != nil || v.Secret != nil || v.Projected != nil || v.DownwardAPI != nil
		}
	}
	return false
}

// materializeVolumes writes the pod's volumes to its directory; it returns volume name -> host
// path. Volume kinds it does not know are left out (their mounts are skipped).
func (w *podWorker) materializeVolumes(ctx context.Context) (map[string]string, error) {
	pod := w.latest()
	out := map[string]string{}
	for _, vol := range pod.Spec.Volumes {
		dir := filepath.Join(w.dir, "volumes", vol.Name)
		switch {
		case vol.EmptyDir != nil:
			if err := os.MkdirAll(dir, 0o777); err != nil {
				return nil, err
			}
		case vol.ConfigMap != nil:
			if err := w.writeConfigMap(ctx, dir, vol.ConfigMap.Name, vol.ConfigMap.Items, vol.ConfigMap.DefaultMode, vol.ConfigMap.Optional); err != nil {
				return nil, fmt.Errorf("volume %q: %w", vol.Name, err)
			}
		case vol.Secret != nil:
			if err := w.writeSecret(ctx, dir, vol.Secret.SecretName, vol.Secret.Items, vol.Secret.DefaultMode, vol.Secret.Optional); err != nil {
				return nil, fmt.Errorf("volume %q: %w", vol.Name, err)
			}
		case vol.DownwardAPI != nil:
			if err := w.writeDownward(pod, dir, vol.DownwardAPI.Items, vol.DownwardAPI.DefaultMode); err != nil {
				return nil, fmt.Errorf("volume %q: %w", vol.Name, err)
			}
		case vol.Projected != nil:
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			mode := vol.Projected.DefaultMode
			for _, src := range vol.Projected.Sources {
				var err error
				switch {
				case src.ConfigMap != nil:
					err = w.writeConfigMap(ctx, dir, src.ConfigMap.Name, src.ConfigMap.Items, mode, src.ConfigMap.Optional)
				case src.Secret != nil:
					err = w.writeSecret(ctx, dir, src.Secret.Name, src.Secret.Items, mode, src.Secret.Optional)
				case src.DownwardAPI != nil:
					err = w.writeDownward(pod, dir, src.DownwardAPI.Items, mode)
				case src.ServiceAccountToken != nil:
					err = w.writeToken(ctx, pod, dir, src.ServiceAccountToken, mode)
				}
				if err != nil {
					return nil, fmt.Errorf("volume %q: %w", vol.Name, err)
				}
			}
		case vol.HostPath != nil:
			if _, err := os.Stat(vol.HostPath.Path); err != nil {
				return nil, fmt.Errorf("volume %q: hostPath %s: %w (the test agent does not create host paths)", vol.Name, vol.HostPath.Path, err)
			}
			out[vol.Name] = vol.HostPath.Path
			continue
		default:
			w.logf("volume %q: kind not supported by the test agent; its mounts are skipped", vol.Name)
			continue
		}
		out[vol.Name] = dir
	}
	return out, nil
}

func fileMode(item *int32, def *int32, fallback os.FileMode) os.FileMode {
	if item != nil {
		return os.FileMode(*item)
	}
	if def != nil {
		return os.FileMode(*def)
	}
	return fallback
}

func writeVolFile(dir, rel string, data []byte, mode os.FileMode) error {
	p := filepath.Join(dir, filepath.Clean("/"+rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

func (w *podWorker) writeKeys(dir string, data map[string][]byte, items []v1.KeyToPath, def *int32, opt bool, what string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if len(items) == 0 {
		for k, v := range data {
			if err := writeVolFile(dir, k, v, fileMode(nil, def, 0o644)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if opt {
				continue
			}
			return fmt.Errorf("configure %s: key %q not found", what, it.Key)
		}
		if err := writeVolFile(dir, it.Path, v, fileMode(it.Mode, def, 0o644)); err != nil {
			return err
		}
	}
	return nil
}

func (w *podWorker) writeConfigMap(ctx context.Context, dir, name string, items []v1.KeyToPath, def *int32, optional *bool) error {
	opt := optional != nil && *optional
	cm, err := w.a.cs.CoreV1().ConfigMaps(w.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && opt {
			return os.MkdirAll(dir, 0o755)
		}
		return fmt.Errorf("configmap %q: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return w.writeKeys(dir, data, items, def, opt, "configmap "+name)
}

func (w *podWorker) writeSecret(ctx context.Context, dir, name string, items []v1.KeyToPath, def *int32, optional *bool) error {
	opt := optional != nil && *optional
	s, err := w.a.cs.CoreV1().Secrets(w.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && opt {
			return os.MkdirAll(dir, 0o755)
		}
		return fmt.Errorf("secret %q: %w", name, err)
	}
	return w.writeKeys(dir, s.Data, items, def, opt, "secret "+name)
}

func (w *podWorker) writeDownward(pod *v1.Pod, dir string, items []v1.DownwardAPIVolumeFile, def *int32) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, it := range items {
		var v string
		var err error
		switch {
		case it.FieldRef != nil:
			v, err = w.fieldRef(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			v, err = w.resourceFieldRef(pod, pod.Spec.Containers[0].Name, it.ResourceFieldRef)
		}
		if err != nil {
			return err
		}
		if err := writeVolFile(dir, it.Path, []byte(v), fileMode(it.Mode, def, 0o644)); err != nil {
			return err
		}
	}
	return nil
}

func (w *podWorker) writeToken(ctx context.Context, pod *v1.Pod, dir string, src *v1.ServiceAccountTokenProjection, def *int32) error {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: src.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if src.Audience != "" {
		req.Spec.Audiences = []string{src.Audience}
	}
	tr, err := w.a.cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("service account token for %q: %w", sa, err)
	}
	return writeVolFile(dir, src.Path, []byte(tr.Status.Token), fileMode(nil, def, 0o600))
}
