package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLoadtestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "-n 0: want 1…100000"},
		{[]string{"-n", "many"}, "invalid value"},
		{[]string{"-url", "localhost:8080"}, "want a ws:// or wss:// URL"},
		{[]string{"-url", "ws://127.0.0.1:8080/ws?play=1"}, "give the session's parameters with -query"},
		{[]string{"-mode", "storm"}, "want sessions, churn, slow or followers"},
		{[]string{"-duration", "-1s"}, "-duration"},
		{[]string{"-pid", "1"}, "-pid needs -url"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		_, err := parseLoadtest(tc.args, io.Discard)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error mentioning %q", tc.args, err, tc.want)
		}
	}
	o, err := parseLoadtest([]string{"-n", "64", "-mode", "slow", "-url", "ws://127.0.0.1:8080/ws", "-pid", "42", "-json"}, io.Discard)
	if err != nil || o.lt.N != 64 || o.lt.Mode != "slow" || o.lt.PID != 42 || !o.json || o.lt.Query != "play=1" {
		t.Errorf("parse: %+v, %v", o, err)
	}
	if _, err := parseLoadtest([]string{"-h"}, io.Discard); !errors.Is(err, errHelp) {
		t.Errorf("-h: %v, want errHelp", err)
	}
}
