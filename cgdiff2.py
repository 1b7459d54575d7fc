import subprocess,sys,re
ev=sys.argv[3]
def load(f):
    out=subprocess.run(["callgrind_annotate","--threshold=100","--show="+ev,"--sort="+ev,f],capture_output=True,text=True).stdout
    d={}
    for line in out.splitlines():
        m=re.match(r"\s*([\d,]+)(?: \([ \d.]+%\))?\s+(\S.*)",line)
        if m and "PROGRAM TOTALS" not in line and ":" in m.group(2):
            k=m.group(2)[:140]; d[k]=d.get(k,0)+int(m.group(1).replace(",",""))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2])
print("tot",sum(a.values()),sum(b.values()))
diff=sorted(((b.get(k,0)-a.get(k,0)),k) for k in set(a)|set(b))
for d,k in diff[::-1][:25]: print(f"{d/1e6:8.2f}M  a={a.get(k,0)/1e6:.2f}M {k}")
