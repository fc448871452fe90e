/* plan_tmpl_schema.c — GENERATED, do not edit: the JSON shape of a PodTemplateSpec
 * (k8s.io/api/core/v1 v0.37.2, Kubernetes v1.37.2) for plan_tmpl.c, written by
 * tests/upstream/cmd/gen-podschema from the Go types by reflection. Regenerate with
 *   cd tests/upstream && go run ./cmd/gen-podschema >../../planner/plan_tmpl_schema.c
 * (the podschema test fails when this file differs from what the generator writes).
 * 199 types, 532 fields; type 0 is PodTemplateSpec; each type's fields are sorted by name. */
#include "planner/plan_tmpl.h"

const plan_tmpl_field plan_tmpl_fields[] = {
    {"metadata", 1, "PodTemplateSpec", ""},
    {"spec", 15, "PodTemplateSpec", ""},
    {"annotations", 6, "ObjectMeta", ""},
    {"creationTimestamp", 5, "ObjectMeta", ""},
    {"deletionGracePeriodSeconds", 4, "ObjectMeta", ""},
    {"deletionTimestamp", 5, "ObjectMeta", ""},
    {"finalizers", 10, "ObjectMeta", ""},
    {"generateName", 2, "ObjectMeta", ""},
    {"generation", 4, "ObjectMeta", ""},
    {"labels", 6, "ObjectMeta", ""},
    {"managedFields", 11, "ObjectMeta", ""},
    {"name", 2, "ObjectMeta", ""},
    {"namespace", 2, "ObjectMeta", ""},
    {"ownerReferences", 7, "ObjectMeta", ""},
    {"resourceVersion", 2, "ObjectMeta", ""},
    {"selfLink", 2, "ObjectMeta", ""},
    {"uid", 3, "ObjectMeta", ""},
    {"apiVersion", 2, "OwnerReference", ""},
    {"blockOwnerDeletion", 9, "OwnerReference", ""},
    {"controller", 9, "OwnerReference", ""},
    {"kind", 2, "OwnerReference", ""},
    {"name", 2, "OwnerReference", ""},
    {"uid", 3, "OwnerReference", ""},
    {"apiVersion", 2, "ManagedFieldsEntry", ""},
    {"fieldsType", 2, "ManagedFieldsEntry", ""},
    {"fieldsV1", 14, "ManagedFieldsEntry", ""},
    {"manager", 2, "ManagedFieldsEntry", ""},
    {"operation", 13, "ManagedFieldsEntry", ""},
    {"subresource", 2, "ManagedFieldsEntry", ""},
    {"time", 5, "ManagedFieldsEntry", ""},
    {"activeDeadlineSeconds", 4, "PodSpec", ""},
    {"affinity", 157, "PodSpec", ""},
    {"automountServiceAccountToken", 9, "PodSpec", ""},
    {"containers", 83, "PodSpec", ""},
    {"dnsConfig", 179, "PodSpec", ""},
    {"dnsPolicy", 148, "PodSpec", ""},
    {"enableServiceLinks", 9, "PodSpec", ""},
    {"ephemeralContainers", 145, "PodSpec", ""},
    {"evictionResponders", 197, "PodSpec", ""},
    {"hostAliases", 177, "PodSpec", ""},
    {"hostIPC", 9, "PodSpec", ""},
    {"hostNetwork", 9, "PodSpec", ""},
    {"hostPID", 9, "PodSpec", ""},
    {"hostUsers", 9, "PodSpec", ""},
    {"hostname", 2, "PodSpec", ""},
    {"hostnameOverride", 2, "PodSpec", ""},
    {"imagePullSecrets", 156, "PodSpec", ""},
    {"initContainers", 83, "PodSpec", ""},
    {"nodeName", 2, "PodSpec", ""},
    {"nodeSelector", 6, "PodSpec", ""},
    {"os", 190, "PodSpec", ""},
    {"overhead", 77, "PodSpec", ""},
    {"preemptionPolicy", 185, "PodSpec", ""},
    {"priority", 23, "PodSpec", ""},
    {"priorityClassName", 2, "PodSpec", ""},
    {"readinessGates", 182, "PodSpec", ""},
    {"resourceClaims", 194, "PodSpec", ""},
    {"resources", 98, "PodSpec", ""},
    {"restartPolicy", 147, "PodSpec", ""},
    {"runtimeClassName", 2, "PodSpec", ""},
    {"schedulerName", 2, "PodSpec", ""},
    {"schedulingGates", 192, "PodSpec", ""},
    {"schedulingGroup", 196, "PodSpec", ""},
    {"securityContext", 149, "PodSpec", ""},
    {"serviceAccount", 2, "PodSpec", ""},
    {"serviceAccountName", 2, "PodSpec", ""},
    {"setHostnameAsFQDN", 9, "PodSpec", ""},
    {"shareProcessNamespace", 9, "PodSpec", ""},
    {"subdomain", 2, "PodSpec", ""},
    {"terminationGracePeriodSeconds", 4, "PodSpec", ""},
    {"tolerations", 173, "PodSpec", ""},
    {"topologySpreadConstraints", 186, "PodSpec", ""},
    {"volumes", 16, "PodSpec", ""},
    {"awsElasticBlockStore", 25, "Volume", "VolumeSource."},
    {"azureDisk", 50, "Volume", "VolumeSource."},
    {"azureFile", 46, "Volume", "VolumeSource."},
    {"cephfs", 38, "Volume", "VolumeSource."},
    {"cinder", 37, "Volume", "VolumeSource."},
    {"configMap", 47, "Volume", "VolumeSource."},
    {"csi", 70, "Volume", "VolumeSource."},
    {"downwardAPI", 40, "Volume", "VolumeSource."},
    {"emptyDir", 20, "Volume", "VolumeSource."},
    {"ephemeral", 71, "Volume", "VolumeSource."},
    {"fc", 45, "Volume", "VolumeSource."},
    {"flexVolume", 36, "Volume", "VolumeSource."},
    {"flocker", 39, "Volume", "VolumeSource."},
    {"gcePersistentDisk", 24, "Volume", "VolumeSource."},
    {"gitRepo", 26, "Volume", "VolumeSource."},
    {"glusterfs", 33, "Volume", "VolumeSource."},
    {"hostPath", 18, "Volume", "VolumeSource."},
    {"image", 81, "Volume", "VolumeSource."},
    {"iscsi", 31, "Volume", "VolumeSource."},
    {"name", 2, "Volume", ""},
    {"nfs", 30, "Volume", "VolumeSource."},
    {"persistentVolumeClaim", 34, "Volume", "VolumeSource."},
    {"photonPersistentDisk", 53, "Volume", "VolumeSource."},
    {"portworxVolume", 67, "Volume", "VolumeSource."},
    {"projected", 54, "Volume", "VolumeSource."},
    {"quobyte", 49, "Volume", "VolumeSource."},
    {"rbd", 35, "Volume", "VolumeSource."},
    {"scaleIO", 68, "Volume", "VolumeSource."},
    {"secret", 27, "Volume", "VolumeSource."},
    {"storageos", 69, "Volume", "VolumeSource."},
    {"vsphereVolume", 48, "Volume", "VolumeSource."},
    {"path", 2, "HostPathVolumeSource", ""},
    {"type", 19, "HostPathVolumeSource", ""},
    {"medium", 21, "EmptyDirVolumeSource", ""},
    {"mode", 23, "EmptyDirVolumeSource", ""},
    {"sizeLimit", 22, "EmptyDirVolumeSource", ""},
    {"fsType", 2, "GCEPersistentDiskVolumeSource", ""},
    {"partition", 23, "GCEPersistentDiskVolumeSource", ""},
    {"pdName", 2, "GCEPersistentDiskVolumeSource", ""},
    {"readOnly", 9, "GCEPersistentDiskVolumeSource", ""},
    {"fsType", 2, "AWSElasticBlockStoreVolumeSource", ""},
    {"partition", 23, "AWSElasticBlockStoreVolumeSource", ""},
    {"readOnly", 9, "AWSElasticBlockStoreVolumeSource", ""},
    {"volumeID", 2, "AWSElasticBlockStoreVolumeSource", ""},
    {"directory", 2, "GitRepoVolumeSource", ""},
    {"repository", 2, "GitRepoVolumeSource", ""},
    {"revision", 2, "GitRepoVolumeSource", ""},
    {"defaultMode", 23, "SecretVolumeSource", ""},
    {"defaultUser", 4, "SecretVolumeSource", ""},
    {"items", 28, "SecretVolumeSource", ""},
    {"optional", 9, "SecretVolumeSource", ""},
    {"secretName", 2, "SecretVolumeSource", ""},
    {"key", 2, "KeyToPath", ""},
    {"mode", 23, "KeyToPath", ""},
    {"path", 2, "KeyToPath", ""},
    {"user", 4, "KeyToPath", ""},
    {"path", 2, "NFSVolumeSource", ""},
    {"readOnly", 9, "NFSVolumeSource", ""},
    {"server", 2, "NFSVolumeSource", ""},
    {"chapAuthDiscovery", 9, "ISCSIVolumeSource", ""},
    {"chapAuthSession", 9, "ISCSIVolumeSource", ""},
    {"fsType", 2, "ISCSIVolumeSource", ""},
    {"initiatorName", 2, "ISCSIVolumeSource", ""},
    {"iqn", 2, "ISCSIVolumeSource", ""},
    {"iscsiInterface", 2, "ISCSIVolumeSource", ""},
    {"lun", 23, "ISCSIVolumeSource", ""},
    {"portals", 10, "ISCSIVolumeSource", ""},
    {"readOnly", 9, "ISCSIVolumeSource", ""},
    {"secretRef", 32, "ISCSIVolumeSource", ""},
    {"targetPortal", 2, "ISCSIVolumeSource", ""},
    {"name", 2, "LocalObjectReference", ""},
    {"endpoints", 2, "GlusterfsVolumeSource", ""},
    {"path", 2, "GlusterfsVolumeSource", ""},
    {"readOnly", 9, "GlusterfsVolumeSource", ""},
    {"claimName", 2, "PersistentVolumeClaimVolumeSource", ""},
    {"readOnly", 9, "PersistentVolumeClaimVolumeSource", ""},
    {"fsType", 2, "RBDVolumeSource", ""},
    {"image", 2, "RBDVolumeSource", ""},
    {"keyring", 2, "RBDVolumeSource", ""},
    {"monitors", 10, "RBDVolumeSource", ""},
    {"pool", 2, "RBDVolumeSource", ""},
    {"readOnly", 9, "RBDVolumeSource", ""},
    {"secretRef", 32, "RBDVolumeSource", ""},
    {"user", 2, "RBDVolumeSource", ""},
    {"driver", 2, "FlexVolumeSource", ""},
    {"fsType", 2, "FlexVolumeSource", ""},
    {"options", 6, "FlexVolumeSource", ""},
    {"readOnly", 9, "FlexVolumeSource", ""},
    {"secretRef", 32, "FlexVolumeSource", ""},
    {"fsType", 2, "CinderVolumeSource", ""},
    {"readOnly", 9, "CinderVolumeSource", ""},
    {"secretRef", 32, "CinderVolumeSource", ""},
    {"volumeID", 2, "CinderVolumeSource", ""},
    {"monitors", 10, "CephFSVolumeSource", ""},
    {"path", 2, "CephFSVolumeSource", ""},
    {"readOnly", 9, "CephFSVolumeSource", ""},
    {"secretFile", 2, "CephFSVolumeSource", ""},
    {"secretRef", 32, "CephFSVolumeSource", ""},
    {"user", 2, "CephFSVolumeSource", ""},
    {"datasetName", 2, "FlockerVolumeSource", ""},
    {"datasetUUID", 2, "FlockerVolumeSource", ""},
    {"defaultMode", 23, "DownwardAPIVolumeSource", ""},
    {"defaultUser", 4, "DownwardAPIVolumeSource", ""},
    {"items", 41, "DownwardAPIVolumeSource", ""},
    {"fieldRef", 43, "DownwardAPIVolumeFile", ""},
    {"mode", 23, "DownwardAPIVolumeFile", ""},
    {"path", 2, "DownwardAPIVolumeFile", ""},
    {"resourceFieldRef", 44, "DownwardAPIVolumeFile", ""},
    {"user", 4, "DownwardAPIVolumeFile", ""},
    {"apiVersion", 2, "ObjectFieldSelector", ""},
    {"fieldPath", 2, "ObjectFieldSelector", ""},
    {"containerName", 2, "ResourceFieldSelector", ""},
    {"divisor", 22, "ResourceFieldSelector", ""},
    {"resource", 2, "ResourceFieldSelector", ""},
    {"fsType", 2, "FCVolumeSource", ""},
    {"lun", 23, "FCVolumeSource", ""},
    {"readOnly", 9, "FCVolumeSource", ""},
    {"targetWWNs", 10, "FCVolumeSource", ""},
    {"wwids", 10, "FCVolumeSource", ""},
    {"readOnly", 9, "AzureFileVolumeSource", ""},
    {"secretName", 2, "AzureFileVolumeSource", ""},
    {"shareName", 2, "AzureFileVolumeSource", ""},
    {"defaultMode", 23, "ConfigMapVolumeSource", ""},
    {"defaultUser", 4, "ConfigMapVolumeSource", ""},
    {"items", 28, "ConfigMapVolumeSource", ""},
    {"name", 2, "ConfigMapVolumeSource", "LocalObjectReference."},
    {"optional", 9, "ConfigMapVolumeSource", ""},
    {"fsType", 2, "VsphereVirtualDiskVolumeSource", ""},
    {"storagePolicyID", 2, "VsphereVirtualDiskVolumeSource", ""},
    {"storagePolicyName", 2, "VsphereVirtualDiskVolumeSource", ""},
    {"volumePath", 2, "VsphereVirtualDiskVolumeSource", ""},
    {"group", 2, "QuobyteVolumeSource", ""},
    {"readOnly", 9, "QuobyteVolumeSource", ""},
    {"registry", 2, "QuobyteVolumeSource", ""},
    {"tenant", 2, "QuobyteVolumeSource", ""},
    {"user", 2, "QuobyteVolumeSource", ""},
    {"volume", 2, "QuobyteVolumeSource", ""},
    {"cachingMode", 51, "AzureDiskVolumeSource", ""},
    {"diskName", 2, "AzureDiskVolumeSource", ""},
    {"diskURI", 2, "AzureDiskVolumeSource", ""},
    {"fsType", 2, "AzureDiskVolumeSource", ""},
    {"kind", 52, "AzureDiskVolumeSource", ""},
    {"readOnly", 9, "AzureDiskVolumeSource", ""},
    {"fsType", 2, "PhotonPersistentDiskVolumeSource", ""},
    {"pdID", 2, "PhotonPersistentDiskVolumeSource", ""},
    {"defaultMode", 23, "ProjectedVolumeSource", ""},
    {"defaultUser", 4, "ProjectedVolumeSource", ""},
    {"sources", 55, "ProjectedVolumeSource", ""},
    {"clusterTrustBundle", 61, "VolumeProjection", ""},
    {"configMap", 59, "VolumeProjection", ""},
    {"downwardAPI", 58, "VolumeProjection", ""},
    {"podCertificate", 66, "VolumeProjection", ""},
    {"secret", 57, "VolumeProjection", ""},
    {"serviceAccountToken", 60, "VolumeProjection", ""},
    {"items", 28, "SecretProjection", ""},
    {"name", 2, "SecretProjection", "LocalObjectReference."},
    {"optional", 9, "SecretProjection", ""},
    {"items", 41, "DownwardAPIProjection", ""},
    {"items", 28, "ConfigMapProjection", ""},
    {"name", 2, "ConfigMapProjection", "LocalObjectReference."},
    {"optional", 9, "ConfigMapProjection", ""},
    {"audience", 2, "ServiceAccountTokenProjection", ""},
    {"expirationSeconds", 4, "ServiceAccountTokenProjection", ""},
    {"path", 2, "ServiceAccountTokenProjection", ""},
    {"user", 4, "ServiceAccountTokenProjection", ""},
    {"labelSelector", 62, "ClusterTrustBundleProjection", ""},
    {"name", 2, "ClusterTrustBundleProjection", ""},
    {"optional", 9, "ClusterTrustBundleProjection", ""},
    {"path", 2, "ClusterTrustBundleProjection", ""},
    {"signerName", 2, "ClusterTrustBundleProjection", ""},
    {"user", 4, "ClusterTrustBundleProjection", ""},
    {"matchExpressions", 63, "LabelSelector", ""},
    {"matchLabels", 6, "LabelSelector", ""},
    {"key", 2, "LabelSelectorRequirement", ""},
    {"operator", 65, "LabelSelectorRequirement", ""},
    {"values", 10, "LabelSelectorRequirement", ""},
    {"certificateChainPath", 2, "PodCertificateProjection", ""},
    {"credentialBundlePath", 2, "PodCertificateProjection", ""},
    {"keyPath", 2, "PodCertificateProjection", ""},
    {"keyType", 2, "PodCertificateProjection", ""},
    {"maxExpirationSeconds", 23, "PodCertificateProjection", ""},
    {"signerName", 2, "PodCertificateProjection", ""},
    {"user", 4, "PodCertificateProjection", ""},
    {"userAnnotations", 6, "PodCertificateProjection", ""},
    {"fsType", 2, "PortworxVolumeSource", ""},
    {"readOnly", 9, "PortworxVolumeSource", ""},
    {"volumeID", 2, "PortworxVolumeSource", ""},
    {"fsType", 2, "ScaleIOVolumeSource", ""},
    {"gateway", 2, "ScaleIOVolumeSource", ""},
    {"protectionDomain", 2, "ScaleIOVolumeSource", ""},
    {"readOnly", 9, "ScaleIOVolumeSource", ""},
    {"secretRef", 32, "ScaleIOVolumeSource", ""},
    {"sslEnabled", 9, "ScaleIOVolumeSource", ""},
    {"storageMode", 2, "ScaleIOVolumeSource", ""},
    {"storagePool", 2, "ScaleIOVolumeSource", ""},
    {"system", 2, "ScaleIOVolumeSource", ""},
    {"volumeName", 2, "ScaleIOVolumeSource", ""},
    {"fsType", 2, "StorageOSVolumeSource", ""},
    {"readOnly", 9, "StorageOSVolumeSource", ""},
    {"secretRef", 32, "StorageOSVolumeSource", ""},
    {"volumeName", 2, "StorageOSVolumeSource", ""},
    {"volumeNamespace", 2, "StorageOSVolumeSource", ""},
    {"driver", 2, "CSIVolumeSource", ""},
    {"fsType", 2, "CSIVolumeSource", ""},
    {"nodePublishSecretRef", 32, "CSIVolumeSource", ""},
    {"readOnly", 9, "CSIVolumeSource", ""},
    {"volumeAttributes", 6, "CSIVolumeSource", ""},
    {"volumeClaimTemplate", 72, "EphemeralVolumeSource", ""},
    {"metadata", 1, "PersistentVolumeClaimTemplate", ""},
    {"spec", 73, "PersistentVolumeClaimTemplate", ""},
    {"accessModes", 74, "PersistentVolumeClaimSpec", ""},
    {"dataSource", 79, "PersistentVolumeClaimSpec", ""},
    {"dataSourceRef", 80, "PersistentVolumeClaimSpec", ""},
    {"resources", 76, "PersistentVolumeClaimSpec", ""},
    {"selector", 62, "PersistentVolumeClaimSpec", ""},
    {"storageClassName", 2, "PersistentVolumeClaimSpec", ""},
    {"volumeAttributesClassName", 2, "PersistentVolumeClaimSpec", ""},
    {"volumeMode", 78, "PersistentVolumeClaimSpec", ""},
    {"volumeName", 2, "PersistentVolumeClaimSpec", ""},
    {"limits", 77, "VolumeResourceRequirements", ""},
    {"requests", 77, "VolumeResourceRequirements", ""},
    {"apiGroup", 2, "TypedLocalObjectReference", ""},
    {"kind", 2, "TypedLocalObjectReference", ""},
    {"name", 2, "TypedLocalObjectReference", ""},
    {"apiGroup", 2, "TypedObjectReference", ""},
    {"kind", 2, "TypedObjectReference", ""},
    {"name", 2, "TypedObjectReference", ""},
    {"namespace", 2, "TypedObjectReference", ""},
    {"pullPolicy", 82, "ImageVolumeSource", ""},
    {"reference", 2, "ImageVolumeSource", ""},
    {"args", 10, "Container", ""},
    {"command", 10, "Container", ""},
    {"env", 92, "Container", ""},
    {"envFrom", 88, "Container", ""},
    {"image", 2, "Container", ""},
    {"imagePullPolicy", 82, "Container", ""},
    {"lifecycle", 129, "Container", ""},
    {"livenessProbe", 118, "Container", ""},
    {"name", 2, "Container", ""},
    {"ports", 85, "Container", ""},
    {"readinessProbe", 118, "Container", ""},
    {"resizePolicy", 101, "Container", ""},
    {"resources", 98, "Container", ""},
    {"restartPolicy", 105, "Container", ""},
    {"restartPolicyRules", 106, "Container", ""},
    {"securityContext", 134, "Container", ""},
    {"startupProbe", 118, "Container", ""},
    {"stdin", 9, "Container", ""},
    {"stdinOnce", 9, "Container", ""},
    {"terminationMessagePath", 2, "Container", ""},
    {"terminationMessagePolicy", 133, "Container", ""},
    {"tty", 9, "Container", ""},
    {"volumeDevices", 116, "Container", ""},
    {"volumeMounts", 112, "Container", ""},
    {"workingDir", 2, "Container", ""},
    {"containerPort", 23, "ContainerPort", ""},
    {"hostIP", 2, "ContainerPort", ""},
    {"hostPort", 23, "ContainerPort", ""},
    {"name", 2, "ContainerPort", ""},
    {"protocol", 87, "ContainerPort", ""},
    {"configMapRef", 90, "EnvFromSource", ""},
    {"prefix", 2, "EnvFromSource", ""},
    {"secretRef", 91, "EnvFromSource", ""},
    {"name", 2, "ConfigMapEnvSource", "LocalObjectReference."},
    {"optional", 9, "ConfigMapEnvSource", ""},
    {"name", 2, "SecretEnvSource", "LocalObjectReference."},
    {"optional", 9, "SecretEnvSource", ""},
    {"name", 2, "EnvVar", ""},
    {"value", 2, "EnvVar", ""},
    {"valueFrom", 94, "EnvVar", ""},
    {"configMapKeyRef", 95, "EnvVarSource", ""},
    {"fieldRef", 43, "EnvVarSource", ""},
    {"fileKeyRef", 97, "EnvVarSource", ""},
    {"resourceFieldRef", 44, "EnvVarSource", ""},
    {"secretKeyRef", 96, "EnvVarSource", ""},
    {"key", 2, "ConfigMapKeySelector", ""},
    {"name", 2, "ConfigMapKeySelector", "LocalObjectReference."},
    {"optional", 9, "ConfigMapKeySelector", ""},
    {"key", 2, "SecretKeySelector", ""},
    {"name", 2, "SecretKeySelector", "LocalObjectReference."},
    {"optional", 9, "SecretKeySelector", ""},
    {"key", 2, "FileKeySelector", ""},
    {"optional", 9, "FileKeySelector", ""},
    {"path", 2, "FileKeySelector", ""},
    {"volumeName", 2, "FileKeySelector", ""},
    {"claims", 99, "ResourceRequirements", ""},
    {"limits", 77, "ResourceRequirements", ""},
    {"requests", 77, "ResourceRequirements", ""},
    {"name", 2, "ResourceClaim", ""},
    {"request", 2, "ResourceClaim", ""},
    {"resourceName", 103, "ContainerResizePolicy", ""},
    {"restartPolicy", 104, "ContainerResizePolicy", ""},
    {"action", 108, "ContainerRestartRule", ""},
    {"exitCodes", 109, "ContainerRestartRule", ""},
    {"operator", 110, "ContainerRestartRuleOnExitCodes", ""},
    {"values", 111, "ContainerRestartRuleOnExitCodes", ""},
    {"bindMountOptions", 10, "VolumeMount", ""},
    {"mountPath", 2, "VolumeMount", ""},
    {"mountPropagation", 115, "VolumeMount", ""},
    {"name", 2, "VolumeMount", ""},
    {"readOnly", 9, "VolumeMount", ""},
    {"recursiveReadOnly", 114, "VolumeMount", ""},
    {"subPath", 2, "VolumeMount", ""},
    {"subPathExpr", 2, "VolumeMount", ""},
    {"devicePath", 2, "VolumeDevice", ""},
    {"name", 2, "VolumeDevice", ""},
    {"exec", 119, "Probe", "ProbeHandler."},
    {"failureThreshold", 23, "Probe", ""},
    {"grpc", 127, "Probe", "ProbeHandler."},
    {"httpGet", 120, "Probe", "ProbeHandler."},
    {"initialDelaySeconds", 23, "Probe", ""},
    {"periodSeconds", 23, "Probe", ""},
    {"successThreshold", 23, "Probe", ""},
    {"tcpSocket", 126, "Probe", "ProbeHandler."},
    {"terminationGracePeriodSeconds", 4, "Probe", ""},
    {"timeoutSeconds", 23, "Probe", ""},
    {"command", 10, "ExecAction", ""},
    {"host", 2, "HTTPGetAction", ""},
    {"httpHeaders", 123, "HTTPGetAction", ""},
    {"path", 2, "HTTPGetAction", ""},
    {"port", 121, "HTTPGetAction", ""},
    {"protocol", 125, "HTTPGetAction", ""},
    {"scheme", 122, "HTTPGetAction", ""},
    {"name", 2, "HTTPHeader", ""},
    {"value", 2, "HTTPHeader", ""},
    {"host", 2, "TCPSocketAction", ""},
    {"port", 121, "TCPSocketAction", ""},
    {"mode", 128, "GRPCAction", ""},
    {"port", 23, "GRPCAction", ""},
    {"service", 2, "GRPCAction", ""},
    {"postStart", 130, "Lifecycle", ""},
    {"preStop", 130, "Lifecycle", ""},
    {"stopSignal", 132, "Lifecycle", ""},
    {"exec", 119, "LifecycleHandler", ""},
    {"httpGet", 120, "LifecycleHandler", ""},
    {"sleep", 131, "LifecycleHandler", ""},
    {"tcpSocket", 126, "LifecycleHandler", ""},
    {"seconds", 4, "SleepAction", ""},
    {"allowPrivilegeEscalation", 9, "SecurityContext", ""},
    {"appArmorProfile", 143, "SecurityContext", ""},
    {"capabilities", 135, "SecurityContext", ""},
    {"privileged", 9, "SecurityContext", ""},
    {"procMount", 140, "SecurityContext", ""},
    {"readOnlyRootFilesystem", 9, "SecurityContext", ""},
    {"runAsGroup", 4, "SecurityContext", ""},
    {"runAsNonRoot", 9, "SecurityContext", ""},
    {"runAsUser", 4, "SecurityContext", ""},
    {"seLinuxOptions", 138, "SecurityContext", ""},
    {"seccompProfile", 141, "SecurityContext", ""},
    {"windowsOptions", 139, "SecurityContext", ""},
    {"add", 136, "Capabilities", ""},
    {"drop", 136, "Capabilities", ""},
    {"level", 2, "SELinuxOptions", ""},
    {"role", 2, "SELinuxOptions", ""},
    {"type", 2, "SELinuxOptions", ""},
    {"user", 2, "SELinuxOptions", ""},
    {"gmsaCredentialSpec", 2, "WindowsSecurityContextOptions", ""},
    {"gmsaCredentialSpecName", 2, "WindowsSecurityContextOptions", ""},
    {"hostProcess", 9, "WindowsSecurityContextOptions", ""},
    {"runAsUserName", 2, "WindowsSecurityContextOptions", ""},
    {"localhostProfile", 2, "SeccompProfile", ""},
    {"type", 142, "SeccompProfile", ""},
    {"localhostProfile", 2, "AppArmorProfile", ""},
    {"type", 144, "AppArmorProfile", ""},
    {"args", 10, "EphemeralContainer", "EphemeralContainerCommon."},
    {"command", 10, "EphemeralContainer", "EphemeralContainerCommon."},
    {"env", 92, "EphemeralContainer", "EphemeralContainerCommon."},
    {"envFrom", 88, "EphemeralContainer", "EphemeralContainerCommon."},
    {"image", 2, "EphemeralContainer", "EphemeralContainerCommon."},
    {"imagePullPolicy", 82, "EphemeralContainer", "EphemeralContainerCommon."},
    {"lifecycle", 129, "EphemeralContainer", "EphemeralContainerCommon."},
    {"livenessProbe", 118, "EphemeralContainer", "EphemeralContainerCommon."},
    {"name", 2, "EphemeralContainer", "EphemeralContainerCommon."},
    {"ports", 85, "EphemeralContainer", "EphemeralContainerCommon."},
    {"readinessProbe", 118, "EphemeralContainer", "EphemeralContainerCommon."},
    {"resizePolicy", 101, "EphemeralContainer", "EphemeralContainerCommon."},
    {"resources", 98, "EphemeralContainer", "EphemeralContainerCommon."},
    {"restartPolicy", 105, "EphemeralContainer", "EphemeralContainerCommon."},
    {"restartPolicyRules", 106, "EphemeralContainer", "EphemeralContainerCommon."},
    {"securityContext", 134, "EphemeralContainer", "EphemeralContainerCommon."},
    {"startupProbe", 118, "EphemeralContainer", "EphemeralContainerCommon."},
    {"stdin", 9, "EphemeralContainer", "EphemeralContainerCommon."},
    {"stdinOnce", 9, "EphemeralContainer", "EphemeralContainerCommon."},
    {"targetContainerName", 2, "EphemeralContainer", ""},
    {"terminationMessagePath", 2, "EphemeralContainer", "EphemeralContainerCommon."},
    {"terminationMessagePolicy", 133, "EphemeralContainer", "EphemeralContainerCommon."},
    {"tty", 9, "EphemeralContainer", "EphemeralContainerCommon."},
    {"volumeDevices", 116, "EphemeralContainer", "EphemeralContainerCommon."},
    {"volumeMounts", 112, "EphemeralContainer", "EphemeralContainerCommon."},
    {"workingDir", 2, "EphemeralContainer", "EphemeralContainerCommon."},
    {"appArmorProfile", 143, "PodSecurityContext", ""},
    {"fsGroup", 4, "PodSecurityContext", ""},
    {"fsGroupChangePolicy", 154, "PodSecurityContext", ""},
    {"runAsGroup", 4, "PodSecurityContext", ""},
    {"runAsNonRoot", 9, "PodSecurityContext", ""},
    {"runAsUser", 4, "PodSecurityContext", ""},
    {"seLinuxChangePolicy", 155, "PodSecurityContext", ""},
    {"seLinuxOptions", 138, "PodSecurityContext", ""},
    {"seccompProfile", 141, "PodSecurityContext", ""},
    {"supplementalGroups", 150, "PodSecurityContext", ""},
    {"supplementalGroupsPolicy", 151, "PodSecurityContext", ""},
    {"sysctls", 152, "PodSecurityContext", ""},
    {"windowsOptions", 139, "PodSecurityContext", ""},
    {"name", 2, "Sysctl", ""},
    {"value", 2, "Sysctl", ""},
    {"nodeAffinity", 158, "Affinity", ""},
    {"podAffinity", 167, "Affinity", ""},
    {"podAntiAffinity", 172, "Affinity", ""},
    {"preferredDuringSchedulingIgnoredDuringExecution", 165, "NodeAffinity", ""},
    {"requiredDuringSchedulingIgnoredDuringExecution", 159, "NodeAffinity", ""},
    {"nodeSelectorTerms", 160, "NodeSelector", ""},
    {"matchExpressions", 162, "NodeSelectorTerm", ""},
    {"matchFields", 162, "NodeSelectorTerm", ""},
    {"key", 2, "NodeSelectorRequirement", ""},
    {"operator", 164, "NodeSelectorRequirement", ""},
    {"values", 10, "NodeSelectorRequirement", ""},
    {"preference", 161, "PreferredSchedulingTerm", ""},
    {"weight", 23, "PreferredSchedulingTerm", ""},
    {"preferredDuringSchedulingIgnoredDuringExecution", 170, "PodAffinity", ""},
    {"requiredDuringSchedulingIgnoredDuringExecution", 168, "PodAffinity", ""},
    {"labelSelector", 62, "PodAffinityTerm", ""},
    {"matchLabelKeys", 10, "PodAffinityTerm", ""},
    {"mismatchLabelKeys", 10, "PodAffinityTerm", ""},
    {"namespaceSelector", 62, "PodAffinityTerm", ""},
    {"namespaces", 10, "PodAffinityTerm", ""},
    {"topologyKey", 2, "PodAffinityTerm", ""},
    {"podAffinityTerm", 169, "WeightedPodAffinityTerm", ""},
    {"weight", 23, "WeightedPodAffinityTerm", ""},
    {"preferredDuringSchedulingIgnoredDuringExecution", 170, "PodAntiAffinity", ""},
    {"requiredDuringSchedulingIgnoredDuringExecution", 168, "PodAntiAffinity", ""},
    {"effect", 176, "Toleration", ""},
    {"key", 2, "Toleration", ""},
    {"operator", 175, "Toleration", ""},
    {"tolerationSeconds", 4, "Toleration", ""},
    {"value", 2, "Toleration", ""},
    {"hostnames", 10, "HostAlias", ""},
    {"ip", 2, "HostAlias", ""},
    {"nameservers", 10, "PodDNSConfig", ""},
    {"options", 180, "PodDNSConfig", ""},
    {"searches", 10, "PodDNSConfig", ""},
    {"name", 2, "PodDNSConfigOption", ""},
    {"value", 2, "PodDNSConfigOption", ""},
    {"conditionType", 184, "PodReadinessGate", ""},
    {"labelSelector", 62, "TopologySpreadConstraint", ""},
    {"matchLabelKeys", 10, "TopologySpreadConstraint", ""},
    {"maxSkew", 23, "TopologySpreadConstraint", ""},
    {"minDomains", 23, "TopologySpreadConstraint", ""},
    {"nodeAffinityPolicy", 189, "TopologySpreadConstraint", ""},
    {"nodeTaintsPolicy", 189, "TopologySpreadConstraint", ""},
    {"topologyKey", 2, "TopologySpreadConstraint", ""},
    {"whenUnsatisfiable", 188, "TopologySpreadConstraint", ""},
    {"name", 191, "PodOS", ""},
    {"name", 2, "PodSchedulingGate", ""},
    {"name", 2, "PodResourceClaim", ""},
    {"resourceClaimName", 2, "PodResourceClaim", ""},
    {"resourceClaimTemplateName", 2, "PodResourceClaim", ""},
    {"podGroupName", 2, "PodSchedulingGroup", ""},
    {"name", 2, "EvictionResponder", ""},
    {"priority", 23, "EvictionResponder", ""},
};

const plan_tmpl_type plan_tmpl_types[] = {
    {PT_OBJECT, 0, 0, 2, "v1.PodTemplateSpec"}, /* 0 */
    {PT_OBJECT, 0, 2, 15, "v1.ObjectMeta"}, /* 1 */
    {PT_STRING, 0, 17, 0, "string"}, /* 2 */
    {PT_STRING, 0, 17, 0, "types.UID"}, /* 3 */
    {PT_INT64, 0, 17, 0, "int64"}, /* 4 */
    {PT_TIME, 0, 17, 0, "string"}, /* 5 */
    {PT_MAP, 2, 17, 0, "map[string]string"}, /* 6 */
    {PT_LIST, 8, 17, 0, "[]v1.OwnerReference"}, /* 7 */
    {PT_OBJECT, 0, 17, 6, "v1.OwnerReference"}, /* 8 */
    {PT_BOOL, 0, 23, 0, "bool"}, /* 9 */
    {PT_LIST, 2, 23, 0, "[]string"}, /* 10 */
    {PT_LIST, 12, 23, 0, "[]v1.ManagedFieldsEntry"}, /* 11 */
    {PT_OBJECT, 0, 23, 7, "v1.ManagedFieldsEntry"}, /* 12 */
    {PT_STRING, 0, 30, 0, "v1.ManagedFieldsOperationType"}, /* 13 */
    {PT_ANY, 0, 30, 0, "v1.FieldsV1"}, /* 14 */
    {PT_OBJECT, 0, 30, 43, "v1.PodSpec"}, /* 15 */
    {PT_LIST, 17, 73, 0, "[]v1.Volume"}, /* 16 */
    {PT_OBJECT, 0, 73, 31, "v1.Volume"}, /* 17 */
    {PT_OBJECT, 0, 104, 2, "v1.HostPathVolumeSource"}, /* 18 */
    {PT_STRING, 0, 106, 0, "v1.HostPathType"}, /* 19 */
    {PT_OBJECT, 0, 106, 3, "v1.EmptyDirVolumeSource"}, /* 20 */
    {PT_STRING, 0, 109, 0, "v1.StorageMedium"}, /* 21 */
    {PT_QUANTITY, 0, 109, 0, "resource.Quantity"}, /* 22 */
    {PT_INT32, 0, 109, 0, "int32"}, /* 23 */
    {PT_OBJECT, 0, 109, 4, "v1.GCEPersistentDiskVolumeSource"}, /* 24 */
    {PT_OBJECT, 0, 113, 4, "v1.AWSElasticBlockStoreVolumeSource"}, /* 25 */
    {PT_OBJECT, 0, 117, 3, "v1.GitRepoVolumeSource"}, /* 26 */
    {PT_OBJECT, 0, 120, 5, "v1.SecretVolumeSource"}, /* 27 */
    {PT_LIST, 29, 125, 0, "[]v1.KeyToPath"}, /* 28 */
    {PT_OBJECT, 0, 125, 4, "v1.KeyToPath"}, /* 29 */
    {PT_OBJECT, 0, 129, 3, "v1.NFSVolumeSource"}, /* 30 */
    {PT_OBJECT, 0, 132, 11, "v1.ISCSIVolumeSource"}, /* 31 */
    {PT_OBJECT, 0, 143, 1, "v1.LocalObjectReference"}, /* 32 */
    {PT_OBJECT, 0, 144, 3, "v1.GlusterfsVolumeSource"}, /* 33 */
    {PT_OBJECT, 0, 147, 2, "v1.PersistentVolumeClaimVolumeSource"}, /* 34 */
    {PT_OBJECT, 0, 149, 8, "v1.RBDVolumeSource"}, /* 35 */
    {PT_OBJECT, 0, 157, 5, "v1.FlexVolumeSource"}, /* 36 */
    {PT_OBJECT, 0, 162, 4, "v1.CinderVolumeSource"}, /* 37 */
    {PT_OBJECT, 0, 166, 6, "v1.CephFSVolumeSource"}, /* 38 */
    {PT_OBJECT, 0, 172, 2, "v1.FlockerVolumeSource"}, /* 39 */
    {PT_OBJECT, 0, 174, 3, "v1.DownwardAPIVolumeSource"}, /* 40 */
    {PT_LIST, 42, 177, 0, "[]v1.DownwardAPIVolumeFile"}, /* 41 */
    {PT_OBJECT, 0, 177, 5, "v1.DownwardAPIVolumeFile"}, /* 42 */
    {PT_OBJECT, 0, 182, 2, "v1.ObjectFieldSelector"}, /* 43 */
    {PT_OBJECT, 0, 184, 3, "v1.ResourceFieldSelector"}, /* 44 */
    {PT_OBJECT, 0, 187, 5, "v1.FCVolumeSource"}, /* 45 */
    {PT_OBJECT, 0, 192, 3, "v1.AzureFileVolumeSource"}, /* 46 */
    {PT_OBJECT, 0, 195, 5, "v1.ConfigMapVolumeSource"}, /* 47 */
    {PT_OBJECT, 0, 200, 4, "v1.VsphereVirtualDiskVolumeSource"}, /* 48 */
    {PT_OBJECT, 0, 204, 6, "v1.QuobyteVolumeSource"}, /* 49 */
    {PT_OBJECT, 0, 210, 6, "v1.AzureDiskVolumeSource"}, /* 50 */
    {PT_STRING, 0, 216, 0, "v1.AzureDataDiskCachingMode"}, /* 51 */
    {PT_STRING, 0, 216, 0, "v1.AzureDataDiskKind"}, /* 52 */
    {PT_OBJECT, 0, 216, 2, "v1.PhotonPersistentDiskVolumeSource"}, /* 53 */
    {PT_OBJECT, 0, 218, 3, "v1.ProjectedVolumeSource"}, /* 54 */
    {PT_LIST, 56, 221, 0, "[]v1.VolumeProjection"}, /* 55 */
    {PT_OBJECT, 0, 221, 6, "v1.VolumeProjection"}, /* 56 */
    {PT_OBJECT, 0, 227, 3, "v1.SecretProjection"}, /* 57 */
    {PT_OBJECT, 0, 230, 1, "v1.DownwardAPIProjection"}, /* 58 */
    {PT_OBJECT, 0, 231, 3, "v1.ConfigMapProjection"}, /* 59 */
    {PT_OBJECT, 0, 234, 4, "v1.ServiceAccountTokenProjection"}, /* 60 */
    {PT_OBJECT, 0, 238, 6, "v1.ClusterTrustBundleProjection"}, /* 61 */
    {PT_OBJECT, 0, 244, 2, "v1.LabelSelector"}, /* 62 */
    {PT_LIST, 64, 246, 0, "[]v1.LabelSelectorRequirement"}, /* 63 */
    {PT_OBJECT, 0, 246, 3, "v1.LabelSelectorRequirement"}, /* 64 */
    {PT_STRING, 0, 249, 0, "v1.LabelSelectorOperator"}, /* 65 */
    {PT_OBJECT, 0, 249, 8, "v1.PodCertificateProjection"}, /* 66 */
    {PT_OBJECT, 0, 257, 3, "v1.PortworxVolumeSource"}, /* 67 */
    {PT_OBJECT, 0, 260, 10, "v1.ScaleIOVolumeSource"}, /* 68 */
    {PT_OBJECT, 0, 270, 5, "v1.StorageOSVolumeSource"}, /* 69 */
    {PT_OBJECT, 0, 275, 5, "v1.CSIVolumeSource"}, /* 70 */
    {PT_OBJECT, 0, 280, 1, "v1.EphemeralVolumeSource"}, /* 71 */
    {PT_OBJECT, 0, 281, 2, "v1.PersistentVolumeClaimTemplate"}, /* 72 */
    {PT_OBJECT, 0, 283, 9, "v1.PersistentVolumeClaimSpec"}, /* 73 */
    {PT_LIST, 75, 292, 0, "[]v1.PersistentVolumeAccessMode"}, /* 74 */
    {PT_STRING, 0, 292, 0, "v1.PersistentVolumeAccessMode"}, /* 75 */
    {PT_OBJECT, 0, 292, 2, "v1.VolumeResourceRequirements"}, /* 76 */
    {PT_MAP, 22, 294, 0, "v1.ResourceList"}, /* 77 */
    {PT_STRING, 0, 294, 0, "v1.PersistentVolumeMode"}, /* 78 */
    {PT_OBJECT, 0, 294, 3, "v1.TypedLocalObjectReference"}, /* 79 */
    {PT_OBJECT, 0, 297, 4, "v1.TypedObjectReference"}, /* 80 */
    {PT_OBJECT, 0, 301, 2, "v1.ImageVolumeSource"}, /* 81 */
    {PT_STRING, 0, 303, 0, "v1.PullPolicy"}, /* 82 */
    {PT_LIST, 84, 303, 0, "[]v1.Container"}, /* 83 */
    {PT_OBJECT, 0, 303, 25, "v1.Container"}, /* 84 */
    {PT_LIST, 86, 328, 0, "[]v1.ContainerPort"}, /* 85 */
    {PT_OBJECT, 0, 328, 5, "v1.ContainerPort"}, /* 86 */
    {PT_STRING, 0, 333, 0, "v1.Protocol"}, /* 87 */
    {PT_LIST, 89, 333, 0, "[]v1.EnvFromSource"}, /* 88 */
    {PT_OBJECT, 0, 333, 3, "v1.EnvFromSource"}, /* 89 */
    {PT_OBJECT, 0, 336, 2, "v1.ConfigMapEnvSource"}, /* 90 */
    {PT_OBJECT, 0, 338, 2, "v1.SecretEnvSource"}, /* 91 */
    {PT_LIST, 93, 340, 0, "[]v1.EnvVar"}, /* 92 */
    {PT_OBJECT, 0, 340, 3, "v1.EnvVar"}, /* 93 */
    {PT_OBJECT, 0, 343, 5, "v1.EnvVarSource"}, /* 94 */
    {PT_OBJECT, 0, 348, 3, "v1.ConfigMapKeySelector"}, /* 95 */
    {PT_OBJECT, 0, 351, 3, "v1.SecretKeySelector"}, /* 96 */
    {PT_OBJECT, 0, 354, 4, "v1.FileKeySelector"}, /* 97 */
    {PT_OBJECT, 0, 358, 3, "v1.ResourceRequirements"}, /* 98 */
    {PT_LIST, 100, 361, 0, "[]v1.ResourceClaim"}, /* 99 */
    {PT_OBJECT, 0, 361, 2, "v1.ResourceClaim"}, /* 100 */
    {PT_LIST, 102, 363, 0, "[]v1.ContainerResizePolicy"}, /* 101 */
    {PT_OBJECT, 0, 363, 2, "v1.ContainerResizePolicy"}, /* 102 */
    {PT_STRING, 0, 365, 0, "v1.ResourceName"}, /* 103 */
    {PT_STRING, 0, 365, 0, "v1.ResourceResizeRestartPolicy"}, /* 104 */
    {PT_STRING, 0, 365, 0, "v1.ContainerRestartPolicy"}, /* 105 */
    {PT_LIST, 107, 365, 0, "[]v1.ContainerRestartRule"}, /* 106 */
    {PT_OBJECT, 0, 365, 2, "v1.ContainerRestartRule"}, /* 107 */
    {PT_STRING, 0, 367, 0, "v1.ContainerRestartRuleAction"}, /* 108 */
    {PT_OBJECT, 0, 367, 2, "v1.ContainerRestartRuleOnExitCodes"}, /* 109 */
    {PT_STRING, 0, 369, 0, "v1.ContainerRestartRuleOnExitCodesOperator"}, /* 110 */
    {PT_LIST, 23, 369, 0, "[]int32"}, /* 111 */
    {PT_LIST, 113, 369, 0, "[]v1.VolumeMount"}, /* 112 */
    {PT_OBJECT, 0, 369, 8, "v1.VolumeMount"}, /* 113 */
    {PT_STRING, 0, 377, 0, "v1.RecursiveReadOnlyMode"}, /* 114 */
    {PT_STRING, 0, 377, 0, "v1.MountPropagationMode"}, /* 115 */
    {PT_LIST, 117, 377, 0, "[]v1.VolumeDevice"}, /* 116 */
    {PT_OBJECT, 0, 377, 2, "v1.VolumeDevice"}, /* 117 */
    {PT_OBJECT, 0, 379, 10, "v1.Probe"}, /* 118 */
    {PT_OBJECT, 0, 389, 1, "v1.ExecAction"}, /* 119 */
    {PT_OBJECT, 0, 390, 6, "v1.HTTPGetAction"}, /* 120 */
    {PT_INT_OR_STRING, 0, 396, 0, "int32"}, /* 121 */
    {PT_STRING, 0, 396, 0, "v1.URIScheme"}, /* 122 */
    {PT_LIST, 124, 396, 0, "[]v1.HTTPHeader"}, /* 123 */
    {PT_OBJECT, 0, 396, 2, "v1.HTTPHeader"}, /* 124 */
    {PT_STRING, 0, 398, 0, "v1.HTTPProtocol"}, /* 125 */
    {PT_OBJECT, 0, 398, 2, "v1.TCPSocketAction"}, /* 126 */
    {PT_OBJECT, 0, 400, 3, "v1.GRPCAction"}, /* 127 */
    {PT_STRING, 0, 403, 0, "v1.GRPCProbeMode"}, /* 128 */
    {PT_OBJECT, 0, 403, 3, "v1.Lifecycle"}, /* 129 */
    {PT_OBJECT, 0, 406, 4, "v1.LifecycleHandler"}, /* 130 */
    {PT_OBJECT, 0, 410, 1, "v1.SleepAction"}, /* 131 */
    {PT_STRING, 0, 411, 0, "v1.Signal"}, /* 132 */
    {PT_STRING, 0, 411, 0, "v1.TerminationMessagePolicy"}, /* 133 */
    {PT_OBJECT, 0, 411, 12, "v1.SecurityContext"}, /* 134 */
    {PT_OBJECT, 0, 423, 2, "v1.Capabilities"}, /* 135 */
    {PT_LIST, 137, 425, 0, "[]v1.Capability"}, /* 136 */
    {PT_STRING, 0, 425, 0, "v1.Capability"}, /* 137 */
    {PT_OBJECT, 0, 425, 4, "v1.SELinuxOptions"}, /* 138 */
    {PT_OBJECT, 0, 429, 4, "v1.WindowsSecurityContextOptions"}, /* 139 */
    {PT_STRING, 0, 433, 0, "v1.ProcMountType"}, /* 140 */
    {PT_OBJECT, 0, 433, 2, "v1.SeccompProfile"}, /* 141 */
    {PT_STRING, 0, 435, 0, "v1.SeccompProfileType"}, /* 142 */
    {PT_OBJECT, 0, 435, 2, "v1.AppArmorProfile"}, /* 143 */
    {PT_STRING, 0, 437, 0, "v1.AppArmorProfileType"}, /* 144 */
    {PT_LIST, 146, 437, 0, "[]v1.EphemeralContainer"}, /* 145 */
    {PT_OBJECT, 0, 437, 26, "v1.EphemeralContainer"}, /* 146 */
    {PT_STRING, 0, 463, 0, "v1.RestartPolicy"}, /* 147 */
    {PT_STRING, 0, 463, 0, "v1.DNSPolicy"}, /* 148 */
    {PT_OBJECT, 0, 463, 13, "v1.PodSecurityContext"}, /* 149 */
    {PT_LIST, 4, 476, 0, "[]int64"}, /* 150 */
    {PT_STRING, 0, 476, 0, "v1.SupplementalGroupsPolicy"}, /* 151 */
    {PT_LIST, 153, 476, 0, "[]v1.Sysctl"}, /* 152 */
    {PT_OBJECT, 0, 476, 2, "v1.Sysctl"}, /* 153 */
    {PT_STRING, 0, 478, 0, "v1.PodFSGroupChangePolicy"}, /* 154 */
    {PT_STRING, 0, 478, 0, "v1.PodSELinuxChangePolicy"}, /* 155 */
    {PT_LIST, 32, 478, 0, "[]v1.LocalObjectReference"}, /* 156 */
    {PT_OBJECT, 0, 478, 3, "v1.Affinity"}, /* 157 */
    {PT_OBJECT, 0, 481, 2, "v1.NodeAffinity"}, /* 158 */
    {PT_OBJECT, 0, 483, 1, "v1.NodeSelector"}, /* 159 */
    {PT_LIST, 161, 484, 0, "[]v1.NodeSelectorTerm"}, /* 160 */
    {PT_OBJECT, 0, 484, 2, "v1.NodeSelectorTerm"}, /* 161 */
    {PT_LIST, 163, 486, 0, "[]v1.NodeSelectorRequirement"}, /* 162 */
    {PT_OBJECT, 0, 486, 3, "v1.NodeSelectorRequirement"}, /* 163 */
    {PT_STRING, 0, 489, 0, "v1.NodeSelectorOperator"}, /* 164 */
    {PT_LIST, 166, 489, 0, "[]v1.PreferredSchedulingTerm"}, /* 165 */
    {PT_OBJECT, 0, 489, 2, "v1.PreferredSchedulingTerm"}, /* 166 */
    {PT_OBJECT, 0, 491, 2, "v1.PodAffinity"}, /* 167 */
    {PT_LIST, 169, 493, 0, "[]v1.PodAffinityTerm"}, /* 168 */
    {PT_OBJECT, 0, 493, 6, "v1.PodAffinityTerm"}, /* 169 */
    {PT_LIST, 171, 499, 0, "[]v1.WeightedPodAffinityTerm"}, /* 170 */
    {PT_OBJECT, 0, 499, 2, "v1.WeightedPodAffinityTerm"}, /* 171 */
    {PT_OBJECT, 0, 501, 2, "v1.PodAntiAffinity"}, /* 172 */
    {PT_LIST, 174, 503, 0, "[]v1.Toleration"}, /* 173 */
    {PT_OBJECT, 0, 503, 5, "v1.Toleration"}, /* 174 */
    {PT_STRING, 0, 508, 0, "v1.TolerationOperator"}, /* 175 */
    {PT_STRING, 0, 508, 0, "v1.TaintEffect"}, /* 176 */
    {PT_LIST, 178, 508, 0, "[]v1.HostAlias"}, /* 177 */
    {PT_OBJECT, 0, 508, 2, "v1.HostAlias"}, /* 178 */
    {PT_OBJECT, 0, 510, 3, "v1.PodDNSConfig"}, /* 179 */
    {PT_LIST, 181, 513, 0, "[]v1.PodDNSConfigOption"}, /* 180 */
    {PT_OBJECT, 0, 513, 2, "v1.PodDNSConfigOption"}, /* 181 */
    {PT_LIST, 183, 515, 0, "[]v1.PodReadinessGate"}, /* 182 */
    {PT_OBJECT, 0, 515, 1, "v1.PodReadinessGate"}, /* 183 */
    {PT_STRING, 0, 516, 0, "v1.PodConditionType"}, /* 184 */
    {PT_STRING, 0, 516, 0, "v1.PreemptionPolicy"}, /* 185 */
    {PT_LIST, 187, 516, 0, "[]v1.TopologySpreadConstraint"}, /* 186 */
    {PT_OBJECT, 0, 516, 8, "v1.TopologySpreadConstraint"}, /* 187 */
    {PT_STRING, 0, 524, 0, "v1.UnsatisfiableConstraintAction"}, /* 188 */
    {PT_STRING, 0, 524, 0, "v1.NodeInclusionPolicy"}, /* 189 */
    {PT_OBJECT, 0, 524, 1, "v1.PodOS"}, /* 190 */
    {PT_STRING, 0, 525, 0, "v1.OSName"}, /* 191 */
    {PT_LIST, 193, 525, 0, "[]v1.PodSchedulingGate"}, /* 192 */
    {PT_OBJECT, 0, 525, 1, "v1.PodSchedulingGate"}, /* 193 */
    {PT_LIST, 195, 526, 0, "[]v1.PodResourceClaim"}, /* 194 */
    {PT_OBJECT, 0, 526, 3, "v1.PodResourceClaim"}, /* 195 */
    {PT_OBJECT, 0, 529, 1, "v1.PodSchedulingGroup"}, /* 196 */
    {PT_LIST, 198, 530, 0, "[]v1.EvictionResponder"}, /* 197 */
    {PT_OBJECT, 0, 530, 2, "v1.EvictionResponder"}, /* 198 */
};

const size_t plan_tmpl_ntypes = 199;
const size_t plan_tmpl_nfields = 532;
