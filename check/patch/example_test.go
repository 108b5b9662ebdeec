package patch

import "fmt"

// ExampleSanitize keeps a source change, drops compiled Python, and reports the rest.
func ExampleSanitize() {
	diff := "diff --git a/app.py b/app.py\nindex 1234567..89abcde 100644\n--- a/app.py\n+++ b/app.py\n" +
		"@@ -1 +1 @@\n-x = 1\n+x = 2\n" +
		"diff --git a/__pycache__/app.cpython-311.pyc b/__pycache__/app.cpython-311.pyc\n" +
		"new file mode 100644\nindex 0000000..e69de29\n"
	res, err := Sanitize([]byte(diff), Options{})
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	added, deleted := 0, 0
	for _, f := range res.Files {
		added, deleted = added+f.Added, deleted+f.Deleted
	}
	fmt.Printf("kept %d file(s), +%d -%d, %d bytes\n", len(res.Files), added, deleted, res.Size)
	for _, d := range res.Dropped {
		fmt.Println("dropped", d.Path, "as", d.Reason)
	}

	_, err = Sanitize([]byte(newFileDiff(".git/hooks/post-checkout")), Options{})
	fmt.Println(err)
	// Output:
	// kept 1 file(s), +1 -1, 111 bytes
	// dropped __pycache__/app.cpython-311.pyc as litter
	// refusing the patch: ".git/hooks/post-checkout" (path into .git)
}
