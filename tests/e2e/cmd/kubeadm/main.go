// kubeadm as released in Kubernetes v1.37.2: calls the upstream command
// (k8s.io/kubernetes/cmd/kubeadm/app) exactly as cmd/kubeadm does; no code copied. The
// e2e scenario kubeadm_recipe renders deploy/kubeadm's static-pod patch with it
// (`kubeadm init phase control-plane scheduler --patches`).
package main

import (
	"k8s.io/kubernetes/cmd/kubeadm/app"
	utilerrors "k8s.io/kubernetes/cmd/kubeadm/app/util/errors"
)

func main() {
	utilerrors.HandleError(app.Run())
}
