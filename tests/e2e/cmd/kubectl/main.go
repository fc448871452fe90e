// kubectl as released in Kubernetes v1.37.2 (the client matching the control plane,
// and its kustomize for rendering deploy/): calls k8s.io/kubectl/pkg/cmd exactly as
// k8s.io/kubernetes/cmd/kubectl does; no code copied.
package main

import (
	"os"

	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) //nolint:errcheck
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
