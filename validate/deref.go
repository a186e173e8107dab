package validate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kubelet validates its internal configuration type, into which a nil
// v1beta1 pointer converts as the zero value. These helpers read a v1beta1
// field the way the internal type holds it.

func i32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func boolean(p *bool) bool {
	return p != nil && *p
}

func duration(p *metav1.Duration) metav1.Duration {
	if p == nil {
		return metav1.Duration{}
	}
	return *p
}

// portValid is utilvalidation.IsValidPortNum.
func portValid(port int32) bool { return 1 <= port && port <= 65535 }

// inRange is utilvalidation.IsInRange.
func inRange(value, lo, hi int64) bool { return lo <= value && value <= hi }
