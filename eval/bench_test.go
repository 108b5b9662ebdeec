package eval_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/frognano/frognano/eval"
	"github.com/frognano/frognano/runner/leaf/leaftest"
)

// BenchmarkEvalTask is the harness's own cost per task: the checkout at the base commit, the
// run's sandboxes (the agent's, the tests before, the tests after when there is a patch), the
// patch taken out and checked, the model's and the test patch combined on the host, and the
// task's tests in a fresh sandbox, with a scripted model that answers at once (model time is
// reported apart, as model-s/op, and is about nothing). One task at a time, on a repository
// of each kind.
func BenchmarkEvalTask(b *testing.B) {
	for _, kind := range []string{"python", "go"} {
		b.Run(kind, func(b *testing.B) {
			var task eval.Task
			var dir string
			switch kind {
			case "python":
				d, commit, patch := pyTaskRepo(b)
				dir = d
				task = eval.Task{InstanceID: "bench-py", RepoPath: filepath.Base(dir), BaseCommit: commit, ProblemStatement: "bench", TestPatch: patch,
					FailToPass: []string{"tests/test_basic.py::test_average"}, PassToPass: []string{"tests/test_basic.py::test_total"}}
			case "go":
				d, commit, patch := taskRepo(b, "gomax", map[string]string{"max_test.go": goBase})
				dir = d
				task = eval.Task{InstanceID: "bench-go", RepoPath: filepath.Base(dir), BaseCommit: commit, ProblemStatement: "bench", TestPatch: patch,
					FailToPass: []string{"example.com/gomax/TestMaxNegative"}, PassToPass: []string{"example.com/gomax/TestMin"}, Image: goImage}
			}
			out := filepath.Join(b.TempDir(), "out")
			var model, tests time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				srv := leaftest.NewServer(b, leaftest.LoadModel(b, "eval-finish.json"))
				r := newRunner(b, fmt.Sprintf("eval-bench-%s", kind), srv.URL, 4)
				b.StartTimer()
				sum, err := eval.Run(context.Background(), []eval.Task{task}, nil, eval.Options{Runner: r, Out: out, Rerun: true,
					TaskDir: filepath.Dir(dir), Allow: eval.Allow{Images: []string{goImage}}})
				if err != nil {
					b.Fatal(err)
				}
				if rec := sum.Records[0]; rec.Status != eval.StatusUnresolved || rec.Tests == nil {
					b.Fatalf("iteration %d: %+v", i, rec)
				}
				model += time.Duration(sum.Records[0].ModelSeconds * float64(time.Second))
				tests += time.Duration(sum.Records[0].TestsSeconds * float64(time.Second))
			}
			b.ReportMetric(model.Seconds()/float64(b.N), "model-s/op")
			// The test commands' own time (the run's tests before and the task's tests; in
			// parallel with the rest in part): what the repository costs, not the harness.
			b.ReportMetric(tests.Seconds()/float64(b.N), "tests-s/op")
		})
	}
}
