package githubapp_test

import (
	"fmt"

	"github.com/frognano/frognano/githubapp"
)

func ExampleRedact() {
	githubapp.RegisterSecret("canary-5e1f0c2d")
	fmt.Println(githubapp.Redact("push failed for ghs_16C7e42F292c6912E7710c838347Ae178B4a (canary-5e1f0c2d)"))
	// Output: push failed for [REDACTED] ([REDACTED])
}

func ExampleConfig_Endpoints() {
	for _, u := range []string{"https://github.com", "https://ghe.example.com"} {
		e, err := githubapp.Config{URL: u}.Endpoints()
		if err != nil {
			panic(err)
		}
		fmt.Println(e.API, e.Upload, e.Git, e.AppsAPI)
	}
	// Output:
	// https://api.github.com/ https://uploads.github.com/ https://github.com/ https://api.github.com
	// https://ghe.example.com/api/v3/ https://ghe.example.com/api/uploads/ https://ghe.example.com/ https://ghe.example.com/api/v3
}
