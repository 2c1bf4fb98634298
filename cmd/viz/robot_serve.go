package main

import "dgpviz/internal/stream"

// robotDefaults opens `viz serve -data robot:PATH` straight into the robot
// preset "robot WiFi (paper)": when the default data set is robot WiFi data
// and -hidden and -inducing were not given, the paper's architecture
// (time → 3 → 3 → 30, train.RobotInducing inducing points).
func robotDefaults(o serveOptions, cat *stream.Catalog) stream.Config {
	if !stream.IsRobot(cat.Get(o.cfg.Dataset)) || o.set["hidden"] || o.set["inducing"] {
		return o.cfg
	}
	return stream.RobotConfig(o.cfg, o.limits)
}
